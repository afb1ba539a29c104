// Reads a JSON array of Kubernetes objects on stdin and validates each one twice:
//  - strictly: every field must exist in the schema of its apiVersion and kind, as the API
//    server's strict field validation (kubectl apply's default) would require. The built-in
//    kinds' fields come from @kubernetes/client-node (models generated from Kubernetes' OpenAPI
//    spec); the custom resources' from crd-fields.mjs.
//  - by value: types, required fields, enums and formats, with kubernetes-models (JSON schemas
//    generated from the same spec, compiled with ajv) and its Prometheus Operator models.
// Prints one line per object; exits 1 if any is invalid.
import { readFileSync } from "node:fs";
import * as k8s from "@kubernetes/client-node/dist/gen/models/ObjectSerializer.js";
import { CRD_KINDS, CRD_TYPES } from "./crd-fields.mjs";

const LEAVES = new Set(["string", "number", "boolean", "Date", "any", "object", "IntOrString"]);

/** The type's fields as { jsonName: type }, or null for a leaf. */
function fieldsOf(type) {
  if (CRD_TYPES[type]) {
    return CRD_TYPES[type];
  }
  const model = k8s[type];
  if (model && typeof model.getAttributeTypeMap === "function") {
    return Object.fromEntries(model.getAttributeTypeMap().map(a => [a.baseName, a.type]));
  }
  if (LEAVES.has(type)) {
    return null;
  }
  throw new Error(`no schema for type ${type}`);
}

/** Adds to errors every field of value that type does not have, at any depth. */
function unknownFields(value, type, path, errors) {
  if (value === null || value === undefined) {
    return;
  }
  let m;
  if ((m = /^Array<(.+)>$/.exec(type))) {
    if (Array.isArray(value)) {
      value.forEach((v, i) => unknownFields(v, m[1], `${path}[${i}]`, errors));
    }
    return;
  }
  if ((m = /^\{ \[key: string\]: (.+); \}$/.exec(type))) {
    if (typeof value === "object") {
      for (const [k, v] of Object.entries(value)) {
        unknownFields(v, m[1], `${path}[${JSON.stringify(k)}]`, errors);
      }
    }
    return;
  }
  const fields = fieldsOf(type);
  if (fields === null || typeof value !== "object" || Array.isArray(value)) {
    return; // a leaf, or a wrong type that the value check reports
  }
  for (const [k, v] of Object.entries(value)) {
    if (!(k in fields)) {
      errors.push(`unknown field ${path ? path + "." : ""}${k}`);
    } else {
      unknownFields(v, fields[k], `${path ? path + "." : ""}${k}`, errors);
    }
  }
}

/** The strict schema's type for an object: V1DaemonSet for apps/v1 DaemonSet, or a CRD's. */
function topType(doc) {
  const key = `${doc.apiVersion}/${doc.kind}`;
  if (CRD_KINDS[key]) {
    return CRD_KINDS[key];
  }
  const version = doc.apiVersion.split("/").pop();
  const type = version.charAt(0).toUpperCase() + version.slice(1) + doc.kind;
  const fields = k8s[type] ? fieldsOf(type) : null;
  if (!fields || !("apiVersion" in fields) || !("kind" in fields)) {
    throw new Error(`no strict schema for ${doc.apiVersion} ${doc.kind}`);
  }
  return type;
}

async function valueModel(doc) {
  const [group, version] = doc.apiVersion.includes("/") ? doc.apiVersion.split("/") : [null, doc.apiVersion];
  const module = group === "monitoring.coreos.com"
    ? `@kubernetes-models/prometheus-operator/${group}/${version}/${doc.kind}`
    : `kubernetes-models/${group ? group + "/" : ""}${version}/${doc.kind}`;
  return (await import(module))[doc.kind];
}

const docs = JSON.parse(readFileSync(0, "utf8"));
let failed = 0;
for (const doc of docs) {
  const name = `${doc.kind}/${doc.metadata?.name}`;
  const errors = [];
  try {
    unknownFields(doc, topType(doc), "", errors);
    const Model = await valueModel(doc);
    try {
      new Model(doc).validate();
    } catch (e) {
      errors.push(e.message.replace(/\s+/g, " "));
    }
  } catch (e) {
    errors.push(e.message.replace(/\s+/g, " "));
  }
  if (errors.length) {
    console.log(`INVALID ${name}: ${errors.join("; ")}`);
    failed++;
  } else {
    console.log(`valid ${name}`);
  }
}
process.exit(failed ? 1 : 0);
