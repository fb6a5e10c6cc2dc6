import type { AlertType } from '../db/schema'

export type { AlertType } from '../db/schema'

/** Every alert type a webhook can ask for (docs/operations.md#alerts); a webhook created without `events` gets them all. */
export const ALERT_TYPES: readonly AlertType[] = ['balance.low', 'quota.threshold', 'webhook.test']
