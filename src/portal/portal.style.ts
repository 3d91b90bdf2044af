/**
 * The portal's one stylesheet: readable from 320 px wide and at 200% zoom (one column, sizes in
 * rem, nothing fixed-width), a visible focus ring on every control, and the browser's own fonts.
 */
export const PORTAL_CSS = `*,*::before,*::after{box-sizing:border-box}
html{font-size:100%;-webkit-text-size-adjust:100%}
body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f6f6f4}
main{max-width:36rem;margin:0 auto;padding:1.5rem 1rem}
h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem;overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0 0 1.5rem}
dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
form{margin:0 0 1.5rem}
fieldset{border:0;margin:0;padding:0;display:grid;gap:.75rem}
legend{font-weight:600;margin-bottom:.75rem;padding:0}
button{display:block;width:100%;min-height:2.75rem;padding:.6rem 1rem;font:inherit;font-weight:600;text-align:left;color:#fff;background:#1d4ed8;border:2px solid #1d4ed8;border-radius:.5rem;cursor:pointer}
button span{display:block;font-weight:400}
button:hover{background:#1e40af}
button:focus-visible,a:focus-visible{outline:3px solid #b45309;outline-offset:3px}
.notice{padding:.75rem 1rem;border-left:.375rem solid #15803d;background:#e8f5ec}
.refusal{padding:.75rem 1rem;border-left:.375rem solid #b91c1c;background:#fdecec}
.test-mode{margin:0 0 1rem;padding:.5rem 1rem;background:#fef3c7;border:1px solid #b45309;border-radius:.5rem;font-weight:600}
`;
