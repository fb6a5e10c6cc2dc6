import { InvalidRequestError } from '../errors/kinds'

/**
 * A client number that sizes a hold (output tokens, choices, web searches) as a whole number
 * from 1 to `maximum`, else 400 invalid_request naming `param`. Holds are integer micro-credits
 * computed from these numbers: a fraction fails the conversion to an integer, and a number like
 * 1e300 makes an amount the database cannot store, which fails the billing statement of every
 * call batched with it. Checked before anything is reserved, such a number costs only its own
 * caller a 400. `maximumIs` says what the maximum is, for the message: "the maximum allowed
 * number of output tokens for claude-sonnet-4-5".
 */
export function requireCount(value: unknown, param: string, maximum: number, maximumIs: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidRequestError(`${param} must be a whole number of at least 1; got ${JSON.stringify(value) ?? String(value)}.`, { param })
  }
  if (value > maximum) throw new InvalidRequestError(`${param}: ${value} > ${maximum}, which is ${maximumIs}.`, { param })
  return value
}
