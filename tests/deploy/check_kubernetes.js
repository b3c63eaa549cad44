#!/usr/bin/env node
/*
Checks deploy/kubernetes offline: every plugin set is rendered, every object is validated against the Kubernetes
API schema of its apiVersion and kind, and our own rules hold.

  (a) Render. Each folder of deploy/kubernetes with a kustomization.yaml, except base, is a set. A scratch copy
      of the tree gets placeholder keys in each set's secrets/ (a checkout's own keys are never read), then the
      set is rendered by this script's small kustomize: resources (files and folders), namespace,
      configMapGenerator and secretGenerator (files only), with a content hash on generated names and references
      to them rewritten in pod templates. Any other kustomization key is a problem (extend render()). With
      `kubectl` (its built-in kustomize) at hand, the set is rendered by it too and both renderings must agree,
      generated names compared without their hash and Secret data decoded.
  (b) Schemas. npm's kubernetes-models (JSON Schemas of the Kubernetes API compiled to validators, one per kind)
      validates each object, strictly: a field the schema does not know is a problem too (kubectl would
      refuse it). Names must be DNS labels or subdomains, as the API server requires.
  (c) Our rules. One replica; the Service selects the pod and targets the container port; probes: readiness
      GET /readyz and liveness GET /livez on the container port, without a key; a preStop and a grace period
      longer than it plus xconnd's own 5 s stop; the store volume (volumeClaimTemplates) mounted at store.path
      /var/lib/xconn; non-root (runAsNonRoot, the Containerfile's uid, fsGroup, no privilege escalation, read-only
      root, capabilities dropped, seccomp RuntimeDefault); resources as docs/scaling.md sizes them (no CPU limit); the ConfigMap's xconnd.yaml parses and
      matches the manifests (listen port, public_base_url = the Service's DNS name, store.path, plugins.dir,
      plugins.allow = the set, api_keys = ["${XCONN_API_KEY}"] from a Secret, sealing_key_file = a key mounted
      from a Secret as a plain file); a plugin is in one set only (one Telegram bot token, one poller); no secret
      value anywhere but the placeholders, no key file in git. With --xconnd: `xconnd --check-config` accepts
      each set's xconnd.yaml (its ${NAME}s set to placeholders).

usage: node tests/deploy/check_kubernetes.js [--source ROOT] [--xconnd PATH] [--kubectl PATH|none] [--self-test]
  --source    the repository (default: two folders up from this file)
  --xconnd    an xconnd binary for --check-config
  --kubectl   kubectl for the cross-check (default: `kubectl` on PATH if it answers `kubectl kustomize`; none: skip)
  --self-test breaks a rendered set in known ways and fails unless each break is caught
Needs `npm ci --prefix tests/deploy` (package.json beside this file). Prints what it checked and every problem;
exit 1 on any problem.
*/
"use strict";

const childProcess = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const os = require("os");
const path = require("path");

let YAML;
try {
  YAML = require("yaml");
  require("kubernetes-models/v1");
} catch (e) {
  console.error("check_kubernetes: its npm packages are missing: npm ci --prefix tests/deploy (tools/setup.sh does it)");
  process.exit(2);
}

// The placeholders written into each set's secrets/ in the scratch copy: the only secret values a rendering may hold.
const PLACEHOLDERS = {
  api_key: "placeholder-api-key-not-a-secret",
  sealing_key: "0".repeat(64), // 64 hex digits, as xconnd reads them; obviously no key
};
const STORE = "/var/lib/xconn";
const PLUGINS_DIR = "/usr/lib/xconn/plugins";
const XCONND_STOP_S = 5; // xconnd closes its sockets and flushes within this after SIGTERM (docs/operations.md)

// --- arguments ------------------------------------------------------------------------------------------------

function parseArgs(argv) {
  const opts = { source: path.resolve(__dirname, "..", ".."), xconnd: "", kubectl: "", selfTest: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--source") opts.source = path.resolve(value());
    else if (a === "--xconnd") opts.xconnd = path.resolve(value());
    else if (a === "--kubectl") opts.kubectl = value();
    else if (a === "--self-test") opts.selfTest = true;
    else usage(`unknown argument ${a}`);
  }
  return opts;
}

function usage(why) {
  console.error(`check_kubernetes: ${why}\nusage: check_kubernetes.js [--source ROOT] [--xconnd PATH] [--kubectl PATH|none] [--self-test]`);
  process.exit(2);
}

// --- (a) rendering --------------------------------------------------------------------------------------------

// Manifests are read as Kubernetes reads them: YAML 1.1 (0440 is octal, as for kubectl).
function parseManifests(text, where) {
  const out = [];
  for (const doc of YAML.parseAllDocuments(text, { version: "1.1" })) {
    if (doc.errors.length) throw new Error(`${where}: ${doc.errors[0].message}`);
    const value = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

function readYaml(file) {
  return parseManifests(fs.readFileSync(file, "utf8"), file);
}

// A content hash in kustomize's form (10 characters of a sha256), not its exact value: that changes between
// kustomize versions, so the cross-check compares generated names without it.
function contentHash(obj) {
  const sorted = (x) =>
    Array.isArray(x) ? x.map(sorted)
      : x && typeof x === "object" ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, sorted(x[k])])) : x;
  const hex = crypto.createHash("sha256").update(JSON.stringify(sorted(obj))).digest("hex");
  return hex.slice(0, 10).replace(/[013ae]/g, (c) => ({ 0: "g", 1: "h", 3: "k", a: "m", e: "t" })[c]);
}

const KNOWN_KUSTOMIZATION_KEYS = new Set(["apiVersion", "kind", "resources", "namespace", "configMapGenerator",
  "secretGenerator"]);
const CLUSTER_SCOPED = new Set(["Namespace"]);

// Returns { objects, generated: Map(generated name -> name before the hash) }.
function render(dir) {
  const kfile = path.join(dir, "kustomization.yaml");
  const [k] = readYaml(kfile);
  for (const key of Object.keys(k)) {
    if (!KNOWN_KUSTOMIZATION_KEYS.has(key)) throw new Error(`${kfile}: this checker's renderer does not handle \`${key}\` (extend render())`);
  }
  let objects = [];
  const generated = new Map();
  for (const r of k.resources || []) {
    const p = path.join(dir, r);
    if (fs.statSync(p).isDirectory()) {
      const sub = render(p);
      objects.push(...sub.objects);
      for (const [a, b] of sub.generated) generated.set(a, b);
    } else {
      objects.push(...readYaml(p));
    }
  }
  const renames = new Map(); // kind/name -> name with hash, for the references below
  const generate = (kind, g) => {
    for (const key of Object.keys(g)) {
      if (!["name", "files", "type"].includes(key)) throw new Error(`${kfile}: ${kind} generator key \`${key}\` is not handled (extend render())`);
    }
    const data = {};
    for (const entry of g.files || []) {
      const [key, file] = entry.includes("=") ? entry.split("=", 2) : [path.basename(entry), entry];
      const bytes = fs.readFileSync(path.join(dir, file));
      data[key] = kind === "Secret" ? bytes.toString("base64") : bytes.toString("utf8");
    }
    const obj = { apiVersion: "v1", kind, metadata: { name: g.name }, data };
    if (kind === "Secret") obj.type = g.type || "Opaque";
    const hashed = `${g.name}-${contentHash(obj)}`;
    renames.set(`${kind}/${g.name}`, hashed);
    generated.set(hashed, g.name);
    obj.metadata.name = hashed;
    objects.push(obj);
  };
  for (const g of k.configMapGenerator || []) generate("ConfigMap", g);
  for (const g of k.secretGenerator || []) generate("Secret", g);
  for (const obj of objects) {
    const spec = podSpec(obj);
    if (!spec) continue;
    const rename = (kind, holder, field) => {
      if (holder && renames.has(`${kind}/${holder[field]}`)) holder[field] = renames.get(`${kind}/${holder[field]}`);
    };
    for (const v of spec.volumes || []) {
      rename("ConfigMap", v.configMap, "name");
      rename("Secret", v.secret, "secretName");
    }
    for (const c of [...(spec.containers || []), ...(spec.initContainers || [])]) {
      for (const e of c.env || []) {
        rename("ConfigMap", e.valueFrom && e.valueFrom.configMapKeyRef, "name");
        rename("Secret", e.valueFrom && e.valueFrom.secretKeyRef, "name");
      }
      for (const e of c.envFrom || []) {
        rename("ConfigMap", e.configMapRef, "name");
        rename("Secret", e.secretRef, "name");
      }
    }
  }
  if (k.namespace) {
    objects = objects.map((o) => (CLUSTER_SCOPED.has(o.kind) ? o : { ...o, metadata: { ...o.metadata, namespace: k.namespace } }));
  }
  const seen = new Set();
  for (const o of objects) {
    const id = objectId(o);
    if (seen.has(id)) throw new Error(`${kfile}: ${id} twice`);
    seen.add(id);
  }
  return { objects, generated };
}

function podSpec(obj) {
  return obj && obj.spec && obj.spec.template && obj.spec.template.spec;
}

function objectId(o) {
  return `${o.kind}/${(o.metadata && o.metadata.namespace) || "-"}/${o.metadata && o.metadata.name}`;
}

// For comparing two renderings: generated names lose their hash, Secret data is decoded (kustomize wraps long
// base64 lines), keys are sorted.
function normalized(objects, generated) {
  const strip = (x) => {
    if (Array.isArray(x)) return x.map(strip);
    if (x && typeof x === "object") return Object.fromEntries(Object.keys(x).sort().map((k) => [k, strip(x[k])]));
    if (typeof x === "string" && generated.has(x)) return generated.get(x);
    return x;
  };
  return objects.map((o) => {
    const copy = strip(o);
    if (copy.kind === "Secret" && copy.data) {
      copy.data = Object.fromEntries(Object.entries(copy.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));
    }
    return copy;
  }).sort((a, b) => objectId(a).localeCompare(objectId(b)));
}

// The path of the first place where two JSON values differ, or null.
function firstDifference(a, b, where) {
  if (a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference(a[k], b[k], `${where}/${k}`);
      if (d !== null) return d;
    }
    return null;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? null : `${where} (ours ${JSON.stringify(a)}, kubectl's ${JSON.stringify(b)})`;
}

function kubectlRender(kubectl, dir) {
  const out = childProcess.execFileSync(kubectl, ["kustomize", dir], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60000 });
  const objects = parseManifests(out, `kubectl kustomize ${dir}`);
  // Its generated names: a generator's name plus "-" and a 10-character hash.
  const generated = new Map();
  for (const o of objects) {
    const m = /^(.*)-[a-z0-9]{10}$/.exec(o.metadata.name);
    if ((o.kind === "ConfigMap" || o.kind === "Secret") && m) generated.set(o.metadata.name, m[1]);
  }
  return { objects, generated };
}

function findKubectl(choice) {
  if (choice === "none") return "";
  const candidate = choice || "kubectl";
  try {
    childProcess.execFileSync(candidate, ["kustomize", "--help"], { stdio: "ignore", timeout: 30000 });
    return candidate;
  } catch (e) {
    if (choice) throw new Error(`--kubectl ${choice}: \`kubectl kustomize\` does not run`);
    return "";
  }
}

// --- (b) schemas ----------------------------------------------------------------------------------------------

function modelFor(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  let mod;
  try {
    mod = require(`kubernetes-models/${group ? group + "/" : ""}${version}`);
  } catch (e) {
    return null;
  }
  return mod[kind] || null;
}

// Validates obj against its kind's schema. kubernetes-models' validators ignore fields they do not know, so the
// object is seen through proxies that record which fields the validator read: a field of an object whose other
// fields were read, in an object that was not walked as a map, is one the schema does not have.
function validateStrictly(obj) {
  const model = modelFor(obj.apiVersion, obj.kind);
  if (!model) return [`no schema for apiVersion ${obj.apiVersion} kind ${obj.kind}`];
  const records = [];
  const wrap = (value, where) => {
    if (value === null || typeof value !== "object") return value;
    const record = { value, where, read: new Set(), walked: false };
    records.push(record);
    const children = new Map();
    return new Proxy(value, {
      get(target, key, receiver) {
        if (typeof key === "string") record.read.add(key);
        const v = Reflect.get(target, key, receiver);
        if (typeof key !== "string" || v === null || typeof v !== "object" || !Object.prototype.hasOwnProperty.call(target, key)) return v;
        if (!children.has(key)) children.set(key, wrap(v, `${where}/${key}`));
        return children.get(key);
      },
      ownKeys(target) {
        record.walked = true; // a map (labels, data, requests): any key is allowed
        return Reflect.ownKeys(target);
      },
    });
  };
  try {
    model.prototype.validate.call(wrap(obj, ""));
  } catch (e) {
    return [e.message];
  }
  const problems = [];
  for (const r of records) {
    if (Array.isArray(r.value) || r.walked || r.read.size === 0) continue; // read.size 0: a schema that takes anything
    for (const key of Object.keys(r.value)) {
      if (!r.read.has(key)) problems.push(`${r.where || "/"}: unknown field "${key}"`);
    }
  }
  return problems;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkNames(o, problem) {
  const name = (o.metadata && o.metadata.name) || "";
  const label = ["Namespace", "Service"].includes(o.kind) || o.kind === "StatefulSet"; // a StatefulSet's name becomes its pods' hostnames
  if (label ? !(DNS_LABEL.test(name) && name.length <= 63) : !(DNS_SUBDOMAIN.test(name) && name.length <= 253)) {
    problem(`${o.kind} name "${name}" is not a DNS ${label ? "label" : "subdomain"}`);
  }
}

// --- (c) our rules --------------------------------------------------------------------------------------------

function containerfileUid(source) {
  const file = path.join(source, "deploy", "container", "Containerfile");
  if (!fs.existsSync(file)) return null;
  const m = /useradd\b[^\n]*?--uid\s+(\d+)/.exec(fs.readFileSync(file, "utf8").replace(/\\\n/g, " "));
  return m ? Number(m[1]) : null;
}

// docs/scaling.md's sizing sentence, "requests **250m CPU and 256 MiB** (limit 1 GiB) and a **10 GiB** volume",
// as Kubernetes quantities; null when the sentence is not there.
function statedSizing(source) {
  const text = fs.readFileSync(path.join(source, "docs", "scaling.md"), "utf8").replace(/\s+/g, " ");
  const m = /requests \*\*(\d+m) CPU and (\d+) MiB\*\* \(limit (\d+) GiB\) and a \*\*(\d+) GiB\*\* volume/.exec(text);
  return m && { cpu: m[1], memory: `${m[2]}Mi`, limit: `${m[3]}Gi`, volume: `${m[4]}Gi` };
}

// The rules for one rendered set; returns its xconnd.yaml text (for --check-config) and its plugins.
function checkSet(set, objects, ctx, problem) {
  const byKind = (kind) => objects.filter((o) => o.kind === kind);
  const one = (kind) => {
    const list = byKind(kind);
    if (list.length !== 1) problem(`${list.length} ${kind} objects, want 1`);
    return list[0];
  };
  const sts = one("StatefulSet");
  const svc = one("Service");
  const ns = one("Namespace");
  if (!sts || !svc) return null;
  const namespace = sts.metadata.namespace;
  if (!namespace) problem("the objects have no namespace (the set's kustomization names one)");
  if (ns && ns.metadata.name !== namespace) problem(`Namespace ${ns.metadata.name} is not the objects' namespace ${namespace}`);
  if (ns && ((ns.metadata.labels || {})["pod-security.kubernetes.io/enforce"]) !== "restricted") {
    problem(`Namespace ${ns.metadata.name} does not enforce the restricted Pod Security Standard`);
  }
  for (const o of objects) {
    if (!CLUSTER_SCOPED.has(o.kind) && o.metadata.namespace !== namespace) problem(`${objectId(o)} is outside namespace ${namespace}`);
  }
  const find = (kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);

  // The workload.
  const spec = sts.spec;
  const pod = podSpec(sts) || {};
  if (spec.replicas !== 1) problem(`StatefulSet replicas is ${spec.replicas}, must be 1 (one store, one poller per bot token)`);
  if (spec.serviceName !== svc.metadata.name) problem(`StatefulSet serviceName ${spec.serviceName} is not the Service ${svc.metadata.name}`);
  const podLabels = (spec.template.metadata && spec.template.metadata.labels) || {};
  const selects = (selector) => selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => podLabels[k] === v);
  if (!selects(spec.selector && spec.selector.matchLabels)) problem("the StatefulSet's selector does not match its pod labels");
  if (!selects(svc.spec.selector)) problem("the Service's selector does not match the pod labels");
  if ((pod.containers || []).length !== 1) problem(`${(pod.containers || []).length} containers, want 1 (xconnd)`);
  const c = (pod.containers || [])[0];
  if (!c) return null;

  // Ports: the container's, the Service's target, the probes'.
  const ports = c.ports || [];
  const portNumber = (p) => (typeof p === "number" ? p : (ports.find((x) => x.name === p) || {}).containerPort);
  const containerPort = ports.length === 1 ? ports[0].containerPort : undefined;
  if (containerPort === undefined) problem(`the container declares ${ports.length} ports, want 1`);
  const svcPorts = svc.spec.ports || [];
  if (svcPorts.length !== 1 || portNumber(svcPorts[0].targetPort ?? svcPorts[0].port) !== containerPort) {
    problem("the Service does not target the container port");
  }
  const probe = (name, wantPath) => {
    const p = c[name];
    if (!p) return problem(`no ${name}`);
    const get = p.httpGet;
    if (!get) return problem(`${name} is not an HTTP GET`);
    if (get.path !== wantPath) problem(`${name} GETs ${get.path}, want ${wantPath}`);
    if (portNumber(get.port) !== containerPort) problem(`${name} is not on the container port ${containerPort}`);
    if ((get.scheme || "HTTP") !== "HTTP") problem(`${name} scheme ${get.scheme}: xconnd speaks plain HTTP`);
    if ((get.httpHeaders || []).length) problem(`${name} sends headers: the probes need no key, and a key must not be in a manifest`);
  };
  probe("readinessProbe", "/readyz");
  probe("livenessProbe", "/livez");
  if (c.startupProbe) probe("startupProbe", "/livez");

  // Stopping: endpoints drop during preStop, then xconnd's own stop, all within the grace period.
  const preStop = c.lifecycle && c.lifecycle.preStop;
  let preStopS = 0;
  if (!preStop) problem("no preStop: the pod would get SIGTERM while still in the Service's endpoints");
  else if (preStop.sleep) preStopS = preStop.sleep.seconds;
  else if (preStop.exec && preStop.exec.command && preStop.exec.command[0] === "sleep") preStopS = Number(preStop.exec.command[1]);
  else problem("preStop is neither a sleep nor an exec of sleep");
  if (!(preStopS >= 1 && preStopS <= 15)) problem(`preStop sleeps ${preStopS} s, want 1..15`);
  const grace = pod.terminationGracePeriodSeconds ?? 30;
  if (grace < preStopS + XCONND_STOP_S + 5) problem(`terminationGracePeriodSeconds ${grace} leaves xconnd less than ${XCONND_STOP_S} s (+5 s margin) after preStop`);

  // Non-root, least privilege.
  const psc = pod.securityContext || {};
  const csc = c.securityContext || {};
  if ((csc.runAsNonRoot ?? psc.runAsNonRoot) !== true) problem("runAsNonRoot is not true");
  const uid = csc.runAsUser ?? psc.runAsUser;
  if (!(uid > 0)) problem(`runAsUser ${uid}: must be the xconn user's uid, not root`);
  if (ctx.uid !== null && uid !== ctx.uid) problem(`runAsUser ${uid} is not the uid of xconn in deploy/container/Containerfile (${ctx.uid})`);
  if (!(psc.fsGroup > 0)) problem("no fsGroup: the volume would not be writable by xconn");
  if (ctx.uid !== null && psc.fsGroup !== ctx.uid) problem(`fsGroup ${psc.fsGroup} is not xconn's group in the Containerfile (${ctx.uid})`);
  if (csc.allowPrivilegeEscalation !== false) problem("allowPrivilegeEscalation is not false");
  if (csc.readOnlyRootFilesystem !== true) problem("readOnlyRootFilesystem is not true");
  if (csc.privileged) problem("privileged");
  const caps = csc.capabilities || {};
  if (!(caps.drop || []).includes("ALL")) problem("capabilities do not drop ALL");
  if ((caps.add || []).length) problem(`capabilities add ${caps.add.join(", ")}`);
  const seccomp = (csc.seccompProfile || psc.seccompProfile || {}).type;
  if (seccomp !== "RuntimeDefault") problem(`seccompProfile ${seccomp}, want RuntimeDefault`);
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) problem("the pod shares a host namespace");

  const res = c.resources || {};
  if (!(res.requests && res.requests.cpu && res.requests.memory)) problem("no cpu and memory requests");
  if (!(res.limits && res.limits.memory)) problem("no memory limit");
  if (res.limits && res.limits.cpu) problem("a CPU limit (docs/scaling.md: throttling stalls every socket of an I/O thread)");
  // The sizes are the ones docs/scaling.md derives from its measurements, so that neither changes alone.
  const size = ctx.sizing;
  if (!size) problem("docs/scaling.md states no sizing (\"requests **CPU and MEMORY** (limit LIMIT) and a **SIZE** volume\")");
  else {
    const stated = { cpu: (res.requests || {}).cpu, memory: (res.requests || {}).memory, limit: (res.limits || {}).memory };
    for (const k of ["cpu", "memory", "limit"]) {
      if (stated[k] !== size[k]) problem(`resources ${k} ${stated[k]}, docs/scaling.md says ${size[k]}`);
    }
  }

  // Volumes: the store from volumeClaimTemplates, the configuration from the ConfigMap, the key from the Secret.
  const mounts = c.volumeMounts || [];
  const volumes = pod.volumes || [];
  const claims = spec.volumeClaimTemplates || [];
  const storeMount = mounts.find((m) => m.mountPath === STORE);
  if (!storeMount) problem(`nothing is mounted at ${STORE}`);
  else {
    if (!claims.some((t) => t.metadata.name === storeMount.name)) problem(`${STORE} is not a volumeClaimTemplate (${storeMount.name})`);
    if (storeMount.readOnly || storeMount.subPath) problem(`${STORE} must be the whole volume, writable`);
    if (volumes.some((v) => v.name === storeMount.name)) problem(`a pod volume shadows the claim ${storeMount.name}`);
  }
  for (const t of claims) {
    if (!((t.spec.accessModes || []).includes("ReadWriteOnce"))) problem(`claim ${t.metadata.name} is not ReadWriteOnce`);
    if (!(t.spec.resources && t.spec.resources.requests && t.spec.resources.requests.storage)) problem(`claim ${t.metadata.name} requests no storage`);
    else if (size && t.spec.resources.requests.storage !== size.volume) problem(`claim ${t.metadata.name} requests ${t.spec.resources.requests.storage}, docs/scaling.md says ${size.volume}`);
  }
  const volumeOf = (mount) => volumes.find((v) => v.name === mount.name);

  // The command and its configuration.
  const cmd = [...(c.command || []), ...(c.args || [])];
  const ci = cmd.indexOf("--config");
  if (cmd[0] !== "/usr/bin/xconnd" || ci < 0) problem(`the container runs ${JSON.stringify(cmd)}, want /usr/bin/xconnd --config FILE`);
  const configPath = cmd[ci + 1];
  const configMount = mounts.find((m) => m.mountPath === configPath);
  const configVolume = configMount && volumeOf(configMount);
  if (!configVolume || !configVolume.configMap || !configMount.subPath) {
    return problem(`--config ${configPath} is not a file mounted (subPath) from a ConfigMap`), null;
  }
  const cm = find("ConfigMap", configVolume.configMap.name);
  const configText = cm && cm.data && cm.data[configMount.subPath];
  if (typeof configText !== "string") return problem(`ConfigMap ${configVolume.configMap.name} has no ${configMount.subPath}`), null;
  let cfg;
  try {
    cfg = YAML.parse(configText); // xconnd's own parser is yaml-cpp (YAML 1.2); --check-config has the last word
  } catch (e) {
    return problem(`xconnd.yaml does not parse: ${e.message}`), null;
  }
  const server = cfg.server || {};
  const store = cfg.store || {};
  const plugins = cfg.plugins || {};
  const [host, port] = String(server.listen || "").split(/:(?=\d+$)/);
  if (host !== "0.0.0.0") problem(`server.listen ${server.listen}: the pod must listen on 0.0.0.0 for the Service`);
  if (Number(port) !== containerPort) problem(`server.listen port ${port} is not the container port ${containerPort}`);
  const wantBase = `http://${svc.metadata.name}.${namespace}.svc.cluster.local:${svcPorts[0] && svcPorts[0].port}`;
  if (server.public_base_url !== wantBase) problem(`server.public_base_url ${server.public_base_url}, want the Service's ${wantBase}`);
  if (store.path !== STORE) problem(`store.path ${store.path}, want ${STORE} (the volume)`);
  if (plugins.dir !== PLUGINS_DIR) problem(`plugins.dir ${plugins.dir}, want the package's ${PLUGINS_DIR}`);
  if (JSON.stringify(plugins.allow) !== JSON.stringify([set])) problem(`plugins.allow ${JSON.stringify(plugins.allow)}, want ["${set}"] (the set's name)`);

  // The keys: from Secrets, never literal.
  if (JSON.stringify(server.api_keys) !== JSON.stringify(["${XCONN_API_KEY}"])) problem('server.api_keys must be exactly ["${XCONN_API_KEY}"]');
  const env = c.env || [];
  const strings = (x) => (typeof x === "string" ? [x] : x && typeof x === "object" ? Object.values(x).flatMap(strings) : []);
  const referenced = strings(cfg).flatMap((v) => [...v.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]));
  for (const name of new Set(referenced)) { // the values' ${NAME}s, not the comments'
    const e = env.find((x) => x.name === name);
    const ref = e && e.valueFrom && e.valueFrom.secretKeyRef;
    if (!ref) { problem(`\${${name}} is not set from a Secret in the container's env`); continue; }
    const secret = find("Secret", ref.name);
    if (!secret || !(secret.data || {})[ref.key]) problem(`\${${name}} names Secret ${ref.name} key ${ref.key}, which the set does not render`);
  }
  for (const e of env) {
    if ("value" in e && /KEY|TOKEN|PASSWORD|SECRET|PROXY/i.test(e.name)) problem(`env ${e.name} has a literal value: take it from a Secret`);
  }
  const keyMount = mounts.find((m) => m.mountPath === store.sealing_key_file);
  const keyVolume = keyMount && volumeOf(keyMount);
  if (!keyVolume || !keyVolume.secret) problem(`store.sealing_key_file ${store.sealing_key_file} is not mounted from a Secret`);
  else {
    // A whole Secret volume holds symbolic links, which xconnd refuses for a key file: subPath mounts the file.
    if (!keyMount.subPath) problem("the sealing key is mounted without subPath (a symbolic link; xconnd refuses it)");
    if (!keyMount.readOnly) problem("the sealing key's mount is not readOnly (xconnd would chmod it to 0600, root's)");
    if (keyVolume.secret.defaultMode !== 0o440) problem(`the key volume's defaultMode is ${keyVolume.secret.defaultMode}, want 0440 (readable by fsGroup xconn)`);
    const item = (keyVolume.secret.items || []).find((i) => i.path === keyMount.subPath);
    const secret = find("Secret", keyVolume.secret.secretName);
    if (!item || !secret || !(secret.data || {})[item.key]) problem(`the sealing key ${keyMount.subPath} is not an item of a rendered Secret`);
  }
  for (const [plugin, section] of Object.entries(cfg.connectors || {})) {
    if (section && section.auth && Object.keys(section.auth).length) problem(`connectors.${plugin}.auth holds values: credentials come from Secrets`);
    const proxy = section && section.config && section.config.proxy;
    if (proxy && !/^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/.test(proxy)) problem(`connectors.${plugin}.config.proxy is literal: a proxy URL may hold a password; use \${NAME} from a Secret`);
  }
  return { configText, plugins: plugins.allow || [], env: env.map((e) => e.name) };
}

// Secrets in the rendering hold exactly the placeholders; the tree commits no Secret data, key file or key.
function checkSecrets(objects, problem) {
  for (const s of objects.filter((o) => o.kind === "Secret")) {
    if (s.stringData) problem(`Secret ${s.metadata.name} has stringData`);
    for (const [k, v] of Object.entries(s.data || {})) {
      if (Buffer.from(v, "base64").toString("utf8") !== PLACEHOLDERS[k]) problem(`Secret ${s.metadata.name} key ${k} holds something other than its placeholder`);
    }
  }
}

function checkTree(source, problem) {
  const root = path.join(source, "deploy", "kubernetes");
  const files = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) { if (e.name !== "secrets") walk(p); } else files.push(p);
    }
  };
  walk(root);
  const container = path.join(source, "deploy", "container", "Containerfile");
  if (fs.existsSync(container)) files.push(container);
  for (const f of files) {
    const text = fs.readFileSync(f, "utf8");
    const rel = path.relative(source, f);
    if (/[0-9a-fA-F]{32,}/.test(text)) problem(`${rel} holds a long hex string (a key?)`);
    if (!f.endsWith(".yaml")) continue;
    let docs = [];
    try { docs = parseManifests(text, rel); } catch (e) { problem(e.message); }
    for (const d of docs) {
      if (d && d.kind === "Secret" && (d.data || d.stringData)) problem(`${rel} commits a Secret with data: generate it from files in secrets/`);
    }
  }
  // Git must ignore each set's secrets/ and track nothing there.
  const git = (args) => childProcess.spawnSync("git", ["-C", source, ...args], { encoding: "utf8" });
  if (git(["rev-parse", "--git-dir"]).status !== 0) {
    console.log("  (not a git checkout: the secrets/ rules of git are not checked)");
    return;
  }
  const tracked = git(["ls-files", "--", "deploy/kubernetes"]).stdout.split("\n").filter((l) => /(^|\/)secrets\//.test(l));
  for (const t of tracked) problem(`${t} is committed: keys stay out of git`);
  for (const set of setsOf(source)) {
    const probe = `deploy/kubernetes/${set}/secrets/api_key`;
    if (git(["check-ignore", "-q", "--no-index", probe]).status !== 0) problem(`${probe} would not be ignored by git`);
  }
}

function setsOf(source) {
  const root = path.join(source, "deploy", "kubernetes");
  return fs.readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== "base" && fs.existsSync(path.join(root, e.name, "kustomization.yaml")))
    .map((e) => e.name).sort();
}

function checkConfig(xconnd, set, checked) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "check-kubernetes-"));
  try {
    const file = path.join(dir, `${set}.yaml`);
    fs.writeFileSync(file, checked.configText);
    const env = { ...process.env };
    for (const name of checked.env) env[name] = `placeholder-${name.toLowerCase()}-not-a-secret`;
    env.XCONN_API_KEY = PLACEHOLDERS.api_key;
    const r = childProcess.spawnSync(xconnd, ["--check-config", "--config", file], { env, encoding: "utf8", timeout: 30000 });
    return r.status === 0 ? "" : `xconnd --check-config refuses ${set}'s xconnd.yaml (exit ${r.status}): ${(r.stderr + r.stdout).trim()}`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// --- driving it -----------------------------------------------------------------------------------------------

// A scratch copy of deploy/kubernetes with placeholder keys, the checkout's own secrets/ left behind.
function scratchCopy(source) {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "check-kubernetes-"));
  const copy = path.join(scratch, "kubernetes");
  fs.cpSync(path.join(source, "deploy", "kubernetes"), copy, {
    recursive: true,
    filter: (src) => path.basename(src) !== "secrets",
  });
  for (const set of setsOf(source)) {
    fs.mkdirSync(path.join(copy, set, "secrets"));
    for (const [k, v] of Object.entries(PLACEHOLDERS)) fs.writeFileSync(path.join(copy, set, "secrets", k), v);
  }
  return { scratch, copy };
}

function checkAll(opts, mutate) {
  const problems = [];
  const problemIn = (where) => (text) => {
    problems.push(`${where}: ${text}`);
    if (!mutate) console.log(`PROBLEM: ${where}: ${text}`);
  };
  const ctx = {
    uid: containerfileUid(opts.source),
    sizing: statedSizing(opts.source),
  };
  if (ctx.uid === null) problemIn("Containerfile")("no `useradd --uid N` for xconn in deploy/container/Containerfile");
  if (!mutate) checkTree(opts.source, problemIn("tree"));
  const sets = setsOf(opts.source);
  if (sets.length === 0) problemIn("deploy/kubernetes")("no set (a folder with a kustomization.yaml beside base)");
  const { scratch, copy } = scratchCopy(opts.source);
  const owner = new Map(); // plugin -> set
  try {
    for (const set of sets) {
      const problem = problemIn(set);
      let rendered;
      try {
        rendered = render(path.join(copy, set));
      } catch (e) {
        problem(`render: ${e.message}`);
        continue;
      }
      if (mutate) mutate(set, rendered.objects);
      for (const o of rendered.objects) {
        for (const p of validateStrictly(o)) problem(`${objectId(o)} (${o.apiVersion}): ${p}`);
        checkNames(o, problem);
      }
      checkSecrets(rendered.objects, problem);
      const checked = checkSet(set, rendered.objects, ctx, problem);
      if (checked) {
        for (const plugin of checked.plugins) {
          if (owner.has(plugin)) problem(`plugin ${plugin} is in set ${owner.get(plugin)} too: two processes would poll one bot token`);
          owner.set(plugin, set);
        }
        if (opts.xconnd && !mutate) {
          const why = checkConfig(opts.xconnd, set, checked);
          if (why) problem(why);
        }
      }
      if (opts.kubectl && !mutate) {
        let theirs;
        try {
          theirs = kubectlRender(opts.kubectl, path.join(copy, set));
        } catch (e) {
          problem(`kubectl kustomize fails: ${(e.stderr || e.message).toString().trim()}`);
          continue;
        }
        const a = normalized(rendered.objects, rendered.generated);
        const b = normalized(theirs.objects, theirs.generated);
        const where = firstDifference(a, b, "");
        if (where !== null) problem(`this renderer and kubectl kustomize disagree at ${where || "the top"} (objects in order: ${a.map(objectId).join(", ")})`);
      }
      if (!mutate) console.log(`  ${set}: ${rendered.objects.length} objects (${rendered.objects.map((o) => o.kind).join(", ")}) rendered${opts.kubectl ? ", the same with kubectl kustomize" : ""}; schemas and rules checked${opts.xconnd ? "; xconnd --check-config passes" : ""}`);
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return problems;
}

// Each break of the echo set must be caught, or the checks above prove nothing.
const BREAKS = [
  ["a field the schema does not know", (s) => { sts(s).spec.template.spec.containers[0].readinesProbe = {}; }],
  ["a field of the wrong type", (s) => { sts(s).spec.replicas = "1"; }],
  ["two replicas", (s) => { sts(s).spec.replicas = 2; }],
  ["readiness on /livez", (s) => { sts(s).spec.template.spec.containers[0].readinessProbe.httpGet.path = "/livez"; }],
  ["liveness on another port", (s) => { sts(s).spec.template.spec.containers[0].livenessProbe.httpGet.port = 9000; }],
  ["the store on an emptyDir", (s) => { sts(s).spec.template.spec.volumes.push({ name: "store", emptyDir: {} }); }],
  ["root", (s) => { sts(s).spec.template.spec.securityContext.runAsUser = 0; }],
  ["a writable root file system", (s) => { sts(s).spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem = false; }],
  ["no preStop", (s) => { delete sts(s).spec.template.spec.containers[0].lifecycle; }],
  ["a literal API key in the config", (s) => { cm(s).data["xconnd.yaml"] = cm(s).data["xconnd.yaml"].replace('["${XCONN_API_KEY}"]', '["0123456789abcdef0123"]'); }],
  ["a real-looking key in a Secret", (s) => { s.find((o) => o.kind === "Secret").data.api_key = Buffer.from("a".repeat(40)).toString("base64"); }],
  ["public_base_url not the Service", (s) => { cm(s).data["xconnd.yaml"] = cm(s).data["xconnd.yaml"].replace("svc.cluster.local", "example.org"); }],
  ["the sealing key as a symbolic link", (s) => { delete sts(s).spec.template.spec.containers[0].volumeMounts.find((m) => m.subPath === "sealing_key").subPath; }],
  ["a namespace without Pod Security", (s) => { delete s.find((o) => o.kind === "Namespace").metadata.labels; }],
  ["a memory request not the measured one", (s) => { sts(s).spec.template.spec.containers[0].resources.requests.memory = "128Mi"; }],
  ["a CPU limit", (s) => { sts(s).spec.template.spec.containers[0].resources.limits.cpu = "1"; }],
  ["a volume not the sized one", (s) => { sts(s).spec.volumeClaimTemplates[0].spec.resources.requests.storage = "1Gi"; }],
  ["a bad name", (s) => { s.find((o) => o.kind === "Service").metadata.name = "Xconnd_svc"; }],
];
function sts(objects) { return objects.find((o) => o.kind === "StatefulSet"); }
function cm(objects) { return objects.find((o) => o.kind === "ConfigMap"); }

function selfTest(opts) {
  let missed = 0;
  for (const [what, apply] of BREAKS) {
    const problems = checkAll({ ...opts, xconnd: "", kubectl: "" }, (set, objects) => { if (set === "echo") apply(objects); });
    const caught = problems.filter((p) => p.startsWith("echo:"));
    console.log(`  ${caught.length ? "caught" : "MISSED"}: ${what}${caught.length ? ` (${caught[0]})` : ""}`);
    if (!caught.length) missed++;
  }
  return missed;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = Date.now();
  opts.kubectl = findKubectl(opts.kubectl);
  const km = require("kubernetes-models/package.json");
  console.log(`check_kubernetes: ${path.join(opts.source, "deploy", "kubernetes")}; schemas: kubernetes-models ${km.version}; ` +
    `kubectl kustomize: ${opts.kubectl || "none (this renderer only)"}; xconnd: ${opts.xconnd || "not given (no --check-config)"}`);
  if (opts.selfTest) {
    const missed = selfTest(opts);
    console.log(`check_kubernetes self-test: ${BREAKS.length - missed} passed, ${missed} failed`);
    process.exit(missed ? 1 : 0);
  }
  const problems = checkAll(opts, null);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (problems.length) {
    console.log(`check_kubernetes: FAIL: ${problems.length} problems (${seconds}s)`);
    process.exit(1);
  }
  console.log(`check_kubernetes: PASS (${seconds}s)`);
}

main();
