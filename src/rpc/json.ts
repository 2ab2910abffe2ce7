/** Guards for the plain JSON the agents send (nothing on the wire is trusted to have its documented shape). */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
