/**
 * REFERENCE ONLY — not part of prazo. A faithful TypeScript transcription of the array-based retry
 * budget sketched in the source article (`criarOrcamentoRetry` in `resiliencia/orcamento-retry.js`,
 * /work/shared/seed/000_562077d034dd4d61.txt), kept so the benchmark can compare prazo's bucketed
 * ring against it in the same run. Names are translated to English; the logic is unchanged: one
 * timestamp per original and per extra in two arrays, pruned from the front with `shift()` on
 * every call (entries at or before `now − windowMs` leave the window).
 */
export interface ArticleRetryBudgetOptions {
  windowMs?: number; // janelaMs
  maxRatio?: number; // razaoMaxima
  minPerSecond?: number; // minimoPorSegundo
  now: () => number; // agora
}

export interface ArticleRetryBudget {
  recordOriginal(): void; // registrarOriginal
  tryConsume(): boolean; // tentarConsumir
  state(): { originals: number; extras: number; ratio: number }; // estado
}

export function createArticleRetryBudget({
  windowMs = 10000,
  maxRatio = 0.1,
  minPerSecond = 3,
  now,
}: ArticleRetryBudgetOptions): ArticleRetryBudget {
  const originals: number[] = [];
  const extras: number[] = [];

  const prune = (t: number) => {
    const cut = t - windowMs;
    while (originals.length && originals[0]! <= cut) originals.shift();
    while (extras.length && extras[0]! <= cut) extras.shift();
  };

  return {
    recordOriginal() {
      const t = now();
      prune(t);
      originals.push(t);
    },

    tryConsume() {
      const t = now();
      prune(t);

      const floor = (minPerSecond * windowMs) / 1000;
      const ceiling = Math.max(floor, originals.length * maxRatio);

      if (extras.length >= ceiling) return false;

      extras.push(t);
      return true;
    },

    state() {
      const t = now();
      prune(t);
      return {
        originals: originals.length,
        extras: extras.length,
        ratio: originals.length ? extras.length / originals.length : 0,
      };
    },
  };
}
