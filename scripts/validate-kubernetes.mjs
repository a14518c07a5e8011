// Checks deploy/kubernetes against the Kubernetes API's own schemas (the kubernetes-models package, made
// from the API's OpenAPI documents): every object of every manifest, and the kustomization's resources,
// which must name each manifest but the example Secret. Exit 1 names what is wrong.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';

const dir = path.resolve(import.meta.dirname, '..', 'deploy', 'kubernetes');
const problems = [];
let checked = 0;

/** The model class of an object: `apps/v1` `Deployment` → kubernetes-models/apps/v1's Deployment. */
async function modelOf({ apiVersion, kind }) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const models = await import(`kubernetes-models/${group ? `${group}/` : ''}${version}`).catch(() => null);
  return models?.[kind] ?? null;
}

const kustomization = yaml.load(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'));
const manifests = readdirSync(dir).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml');
for (const resource of kustomization.resources ?? []) if (!manifests.includes(resource)) problems.push(`kustomization.yaml names ${resource}, which is not there`);
for (const file of manifests) if (file !== 'secret.yaml' && !(kustomization.resources ?? []).includes(file)) problems.push(`kustomization.yaml does not name ${file}`);

for (const file of manifests) {
  for (const object of yaml.loadAll(readFileSync(path.join(dir, file), 'utf8'))) {
    if (!object) continue;
    const Model = object.apiVersion && object.kind ? await modelOf(object) : null;
    if (!Model) {
      problems.push(`${file}: ${object.apiVersion}/${object.kind} is no kind of the Kubernetes API`);
      continue;
    }
    try {
      new Model(object).validate();
      checked++;
    } catch (err) {
      problems.push(`${file}: ${object.kind} ${object.metadata?.name}: ${err.message}`);
    }
  }
}
if (problems.length) {
  for (const problem of problems) console.error(`!! ${problem}`);
  process.exit(1);
}
console.log(`${checked} Kubernetes objects valid against the API's schemas; kustomization.yaml names every manifest`);
