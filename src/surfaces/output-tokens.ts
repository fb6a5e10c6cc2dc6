import { DEFAULT_MAX_OUTPUT_TOKENS } from '../canonical/prompt'
import type { ModelEntry } from '../catalog/catalog-schema'
import { requireCount } from '../http/request-bounds'

/**
 * The most output tokens a request may ask of a model whose config names no maximum. It is far
 * above any model's real limit today (the largest are near 128k), so it refuses no request the
 * upstream would serve, yet it keeps a hold (tokens × choices × price, in micro-credits) many
 * orders of magnitude inside the database's 64-bit amounts.
 */
export const UNCONFIGURED_MAX_OUTPUT_TOKENS = 1_000_000

/**
 * The output tokens a request gets from `model`: what it asked for (already checked against the
 * model's maximum), else the model's configured maximum, else the default. The
 * hold is sized for this number.
 */
export function outputAllowanceOf(model: ModelEntry, requested: number | undefined): number {
  return requested ?? model.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS
}

/** The most output tokens a request may ask of `model`: above it, 400 naming the field. */
export function maxOutputTokensOf(model: ModelEntry): number {
  return model.maxOutputTokens ?? UNCONFIGURED_MAX_OUTPUT_TOKENS
}

/**
 * A request's output-token field (`max_tokens`, `max_completion_tokens`, `max_output_tokens`)
 * as a whole number from 1 to `maximum`, or 400 naming the field in the words the providers use.
 * `modelName` is the model as the client named it.
 */
export function requireOutputTokens(value: unknown, param: string, maximum: number, modelName: string): number {
  return requireCount(value, param, maximum, `the maximum allowed number of output tokens for ${modelName}`)
}
