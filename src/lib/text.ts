/**
 * Text the service returns that can quote what it was sent (a path, a URL, an error message) is
 * clipped to the length the contract gives it (openapi/openapi.yaml), so that every answer keeps
 * its bound whatever the request.
 */
export function clipped(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text;
  // Code points, not UTF-16 units: the contract's maxLength counts characters, and no pair is split.
  const characters = Array.from(text);
  return characters.length <= maxLength ? text : `${characters.slice(0, maxLength - 1).join('')}…`;
}
