// What a provider that clones a run's repository itself (a VM-host target's agent provider) is given:
// `repository` of a session in openapi/providers.yaml. Workspaces make it; executors hand it over.

export interface ProviderRepository {
  /** The repository's HTTP(S) URL, without credentials. */
  url: string;
  /** Where the run starts: a branch, a tag or a commit. */
  ref: string;
  /** Where the changes go. */
  branch: string;
  /** A token for this one repository, revoked when the run ends; never the agent's. */
  token: string;
  /** Where `branch` was when the run started (null: it did not exist): the push goes over nothing else (force-with-lease). */
  lease: string | null;
  author: { name: string; email: string };
  commitMessage: string;
}
