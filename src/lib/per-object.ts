/**
 * `build`, remembered per object: each key's value is built on its first call and returned as is
 * after that, for as long as the key lives (a WeakMap, so nothing is held for a key gone). Hot-path
 * caches of the service hand out the same principal object request after request; what depends on
 * it alone (its log fields, its rate-limit key, its `/api/me` body) is built once through this.
 */
export function perObject<K extends object, V>(build: (key: K) => V): (key: K) => V {
  const built = new WeakMap<K, V>();
  return (key) => {
    let value = built.get(key);
    if (value === undefined) {
      value = build(key);
      built.set(key, value);
    }
    return value;
  };
}
