/**
 * Whether this instance wants new traffic. It stops wanting it at the first shutdown signal,
 * while the listener still serves, so load balancers probing `/v1/readyz` take it out before it
 * closes (docs/operations.md#shutdown).
 */
export class Readiness {
  private drainStarted = false

  get draining(): boolean {
    return this.drainStarted
  }

  startDraining(): void {
    this.drainStarted = true
  }
}
