/**
 * What every server adapter (`prazo/http`, `prazo/express`, `prazo/fastify`) exports about
 * admission and criticality, listed once.
 */
export type {
  Admission,
  AdmissionEvents,
  AdmissionRouteView,
  AdmissionTicket,
  OverloadEvent,
  Refusal,
} from '../admission/admission.js';
export { createAdmission } from '../admission/admission.js';
export type { RefusalReason } from '../admission/admission-decision.js';
export type { AdmissionOptions } from '../admission/admission-options.js';
export { ADMISSION_DEFAULTS } from '../admission/admission-options.js';
export { currentCriticality, withCriticality } from '../deadline/criticality-context.js';
export type { Criticality } from '../wire/criticality-header.js';
export { CRITICALITY_HEADER, parseCriticality } from '../wire/criticality-header.js';
export { refusalBody, refusalHeaders } from './admission-response.js';
