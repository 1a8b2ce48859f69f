/** The token of an `Authorization: Bearer <token>` header, or null for any other header or none. */
export function bearerToken(authorization: string | undefined | null): string | null {
  return /^Bearer (\S+)$/.exec(authorization ?? "")?.[1] ?? null;
}
