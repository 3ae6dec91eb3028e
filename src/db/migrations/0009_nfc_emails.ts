import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../dialect.js';

interface UsersOnly {
  users: { id: string; email: string };
}

const PAGE = 500;

/**
 * Emails are compared in Unicode NFC from this migration on (`normalizeEmail` in account/user-service.ts),
 * so the stored ones that are not are rewritten, or their accounts could no longer log in. Only
 * emails with a character outside printable ASCII can change; they are read in pages by id. An
 * email whose NFC form another account already holds is left as it is: two accounts made for one
 * address before the rule, which only the operator can settle (`rz-auth users delete`).
 */
export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped as unknown as Kysely<UsersOnly>;
  const notAscii = isPostgres(db) ? sql<boolean>`email ~ '[^ -~]'` : sql<boolean>`email glob '*[^ -~]*'`;
  let after = '';
  for (;;) {
    const rows = await db.selectFrom('users').select(['id', 'email']).where(notAscii).where('id', '>', after).orderBy('id').limit(PAGE).execute();
    for (const { id, email } of rows) {
      const nfc = email.normalize('NFC');
      if (nfc === email) continue;
      const taken = await db.selectFrom('users').select('id').where('email', '=', nfc).executeTakeFirst();
      if (!taken) await db.updateTable('users').set({ email: nfc }).where('id', '=', id).execute();
    }
    const last = rows.at(-1);
    if (rows.length < PAGE || !last) return;
    after = last.id;
  }
}

/** Nothing to undo: an NFC email is as valid under the earlier rule. */
export async function down(): Promise<void> {}
