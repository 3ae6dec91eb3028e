/** Why a token could not be read, derived from or attenuated: each code is stable. */
export type TokenErrorCode = 'ERR_TOKEN_MALFORMED' | 'ERR_PARENT_MALFORMED' | 'ERR_OPTION_INVALID' | 'ERR_TOKEN_TOO_LARGE';

/**
 * The one error class of the package. A malformed token never says which check failed (the
 * server answers every such token with the same bytes, and so does this message).
 */
export class TokenError extends Error {
  readonly code: TokenErrorCode;
  /** The option at fault, for `ERR_OPTION_INVALID`. */
  readonly option: string | undefined;

  constructor(code: TokenErrorCode, message: string, option?: string) {
    super(message);
    this.name = 'TokenError';
    this.code = code;
    this.option = option;
  }
}

export const malformedToken = (): TokenError => new TokenError('ERR_TOKEN_MALFORMED', 'Not a well-formed rzd_ token.');
export const malformedParent = (): TokenError =>
  new TokenError('ERR_PARENT_MALFORMED', 'The parent must be an rz_ or rza_ token with a valid checksum.');
export const invalidOption = (option: string, rule: string): TokenError =>
  new TokenError('ERR_OPTION_INVALID', `${option} ${rule}`, option);
