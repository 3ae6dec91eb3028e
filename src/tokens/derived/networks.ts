import { narrows } from '../cidrs.js';

/**
 * The networks inside every one of `lists` (the parent's allow-list and each `cidrs` caveat):
 * two CIDR networks meet only when one holds the other, so the intersection of two lists is each
 * network of one that lies inside a network of the other. Null without any list (anywhere); an
 * empty list when they share no address (nowhere).
 */
export function intersectNetworks(lists: readonly (readonly string[])[]): readonly string[] | null {
  let result: string[] | null = null;
  for (const list of lists) {
    if (result === null) {
      result = [...new Set(list)];
      continue;
    }
    const held: string[] = result;
    const next = new Set<string>();
    for (const a of held) for (const b of list) {
      if (narrows([b], [a])) next.add(a);
      else if (narrows([a], [b])) next.add(b);
    }
    result = [...next];
  }
  return result;
}
