// Reads a JSON array of Kubernetes objects on stdin and validates each against the schema of
// its apiVersion and kind (kubernetes-models: JSON schemas generated from the Kubernetes
// OpenAPI spec, compiled with ajv). Prints one line per object; exits 1 if any is invalid.
import { readFileSync } from "node:fs";

const docs = JSON.parse(readFileSync(0, "utf8"));
let failed = 0;
for (const doc of docs) {
  const [group, version] = doc.apiVersion.includes("/") ? doc.apiVersion.split("/") : [null, doc.apiVersion];
  const module = `kubernetes-models/${group ? group + "/" : ""}${version}/${doc.kind}`;
  const name = `${doc.kind}/${doc.metadata?.name}`;
  let Model;
  try {
    Model = (await import(module))[doc.kind];
  } catch (e) {
    console.log(`INVALID ${name}: no schema for ${doc.apiVersion} ${doc.kind}`);
    failed++;
    continue;
  }
  try {
    new Model(doc).validate();
    console.log(`valid ${name}`);
  } catch (e) {
    console.log(`INVALID ${name}: ${e.message.replace(/\s+/g, " ")}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
