import { chartScaleSource } from './chart-scale.js';
import { type DashboardData, dashboardClient } from './client.js';

const STYLE = `
body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:16px 24px;color:#212529;background:#fff}
h1{font-size:20px;margin:0 0 4px}
#status{color:#495057;margin-bottom:4px}
#phases{color:#495057;font-size:12px;margin-bottom:12px}
#phases .phase{white-space:nowrap}
.row{display:grid;grid-template-columns:1fr 1fr;gap:16px;margin-bottom:8px}
figure{margin:0;border:1px solid #dee2e6;border-radius:6px;padding:6px 8px}
figcaption{font-weight:600;font-size:13px}
svg.chart{width:100%;height:auto;display:block}
table{border-collapse:collapse;margin:8px 0}
th,td{border-bottom:1px solid #dee2e6;padding:3px 10px;text-align:right}
th:first-child{text-align:left;font-weight:normal;max-width:640px}
th .why{color:#6c757d;font-size:12px;margin-top:1px}
td{vertical-align:top;white-space:nowrap}
ul{padding-left:18px}
li.pass{color:#2b8a3e}
li.fail{color:#c92a2a}
#waterfalls .row{grid-template-columns:1fr 1fr}
svg.waterfall{max-width:100%;height:auto;display:block}
`;

/** Embeds JSON in a `<script>` element without letting `</script>` or `<!--` end it early. */
function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/**
 * The dashboard as one self-contained HTML document: inline CSS, inline script, charts drawn as inline
 * SVG by the page itself — nothing is loaded from anywhere else. `live` pages poll `/data` every
 * second; a static page (the end-of-drill report) carries its data and opens offline.
 */
export function renderDashboardPage(data: DashboardData, live: boolean): string {
  const title = data.title.replace(/[<>&]/g, '');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><style>${STYLE}</style></head>
<body><h1 id="title">${title}</h1><div id="status"></div><div id="phases"></div><div id="summary"></div><div id="charts"></div><div id="waterfalls"></div>
<script>(${dashboardClient.toString()})(${embedJson(data)}, ${live ? 'true' : 'false'}, ${chartScaleSource()});</script>
</body></html>
`;
}
