/** A call a sender (Slack, Linear, Jira, GitLab) refused or that did not reach it; the message says which and why, never the token. */
export class SenderFailure extends Error {}
