// How long credentials live, in seconds unless named otherwise. Named once here, below both the
// authorization server that issues them and the limits and sweeps that depend on them.
const HOUR = 60 * 60;
const DAY = 24 * HOUR;

export const ACCESS_TOKEN_TTL = HOUR;
/** From the first issue: rotated refresh tokens inherit what is left of it. */
export const REFRESH_TOKEN_LIFETIME = 30 * DAY;
export const DEVICE_CODE_TTL = 10 * 60;
/** RFC 8628 polling interval announced with every device code. */
export const POLLING_INTERVAL = 5;
/** The authorization server's own browser session; tokens do not depend on it. */
export const PROVIDER_SESSION_TTL = DAY;
export const SESSION_TTL_MS = 7 * DAY * 1000;
/**
 * Authorization-server records stay readable this long past their expiry: the provider checks expiry
 * itself, and an expired device code must still be found for polling to answer `expired_token`.
 */
export const EXPIRED_GRACE_MS = HOUR * 1000;
