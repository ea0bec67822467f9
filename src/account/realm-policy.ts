/**
 * The realm's ticket policy defaults: the longest ticket life and renewable
 * life, which `init` writes on the realm container and the KDC falls back to
 * when the container has none (MIT's defaults: one day, one week).
 */
export const DEFAULT_MAX_LIFE = 24 * 3600;
export const DEFAULT_MAX_RENEW = 7 * 24 * 3600;
