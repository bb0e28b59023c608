// `node cookbook_decode.js DECODER MODULE`: every case of a data module decoded by the cookbook's
// own decoder (sections 1 and 2 of the page component DECODER, `_agentx.jsx` from an SGLang
// checkout, run unmodified), printed as `sync decode --all --format json` prints them: the
// reference `python -m bench decode` measures side by side. The decoder's text is read at run
// time and never stored in this project.
"use strict";
const fs = require("fs");

const [decoderPath, modulePath] = process.argv.slice(2);
const source = fs.readFileSync(decoderPath, "utf8");
const start = source.indexOf("// ==== 1. Decoder ====");
const end = source.indexOf("// ==== 3. Labels and notes ====");
if (start < 0 || end < start) {
  process.stderr.write(`${decoderPath}: no "1. Decoder" .. "3. Labels and notes" sections\n`);
  process.exit(2);
}
// The sections are closures over the component's `data` prop: wrap them in a function of it.
const decoderFor = new Function("data", `${source.slice(start, end)}\nreturn { blocksFor, formatBlock };`);

// The module in the generator's layout: comment lines, `export const agentx = {...};`.
const text = fs.readFileSync(modulePath, "utf8");
const body = text.slice(text.indexOf("{", text.indexOf("export const")));
const data = JSON.parse(body.slice(0, body.lastIndexOf("}") + 1));
const { blocksFor, formatBlock } = decoderFor(data);

const lines = [];
data.cells.forEach((cell, ci) => {
  cell.points.forEach((point, pi) => {
    for (const router of Object.keys(cell.routers).sort()) {
      for (const kv of cell.kv.available) {
        const blocks = blocksFor(ci, pi, router, kv);
        // A point's status, or its cell's shared provenance (`cell.prov`) in the newer format.
        const measured = { ...(cell.prov || {}), ...point }.status;
        const status = router === cell.submitted && kv === point.kv ? measured : "derived";
        lines.push(`    ${JSON.stringify({
          cell: ci, cellId: cell.id, point: pi, router, kv, status, blocks,
          text: blocks.map(formatBlock),
        })}`);
      }
    }
  });
});
process.stdout.write(`{\n  "module": ${JSON.stringify(modulePath)},\n  "cases": [\n${lines.join(",\n")}\n  ]\n}\n`);
