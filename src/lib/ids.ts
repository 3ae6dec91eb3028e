const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** True for a lower-case hyphenated UUID, the only id form the service issues. */
export const isUuid = (value: string): boolean => UUID.test(value);
