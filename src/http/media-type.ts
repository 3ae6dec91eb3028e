/** RFC 9110 token characters: a parameter's name, or its unquoted value. */
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/**
 * One `; name=value` parameter (or an empty one, which RFC 9110 allows), sticky. Each match starts
 * at a `;`, which neither whitespace nor a token holds, so matching is linear.
 */
const PARAMETER = new RegExp(`[ \\t]*;[ \\t]*(?:(${TOKEN})=(${TOKEN}|"(?:[^"\\\\]|\\\\.)*"))?`, 'y');
/** Far longer than any real Content-Type: a longer one is refused before it is read. */
const MAX_LENGTH = 256;

const unquote = (value: string): string => (value.startsWith('"') ? value.slice(1, -1).replace(/\\(.)/g, '$1') : value);

/**
 * Whether a Content-Type header is `type` (case-insensitive), with any well-formed parameters, a
 * charset among them only if it is UTF-8: JSON and forms are read as UTF-8 and nothing else.
 */
export function isMediaType(header: string, type: string): boolean {
  if (header.length > MAX_LENGTH || header.slice(0, type.length).toLowerCase() !== type) return false;
  let at = type.length;
  while (at < header.length) {
    PARAMETER.lastIndex = at;
    const parameter = PARAMETER.exec(header);
    if (!parameter) return /^[ \t]*$/.test(header.slice(at));
    const [, name, value] = parameter;
    if (name?.toLowerCase() === 'charset' && unquote(value ?? '').toLowerCase() !== 'utf-8') return false;
    at = PARAMETER.lastIndex;
  }
  return true;
}
