// Debian's Dovecot, an IMAP server for the inbox's poller (src/platform/providers/email/imap.ts): on
// 127.0.0.1 only, plain-text logins without TLS, users from a passwd-file of its own, mail in
// maildirs under the peers' folder. Its configuration is written by its start command, so the peer
// needs nothing of the machine's /etc/dovecot. Tests put messages in with IMAP APPEND and make a
// mailbox's UIDVALIDITY change by deleting and creating it again; each test uses mailboxes of its own.
import { join } from 'node:path';
import { answers, PEERS_DIR, type Peer } from './peer.ts';

const port = Number(process.env.TEST_DOVECOT_PORT ?? 10143);
const dir = join(PEERS_DIR, 'dovecot');

/** The test users (password `secret`). */
export const DOVECOT_USERS = ['inbox', 'inbox2'] as const;
export const DOVECOT_PASSWORD = 'secret';

/** As root it serves mail as its own `dovecot` user; otherwise as the user running it. */
const asRoot = process.getuid?.() === 0;
const user = asRoot ? 'dovecot' : (process.env.USER ?? 'nobody');

const config = `
base_dir = ${dir}/run
state_dir = ${dir}/state
instance_name = rds-peers-dovecot
listen = 127.0.0.1
protocols = imap
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
log_path = /dev/stderr
first_valid_uid = 1
default_internal_user = ${user}
default_login_user = ${user}
mail_location = maildir:${dir}/mail/%u
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/users
}
userdb {
  driver = static
  args = uid=${user} gid=${user} home=${dir}/mail/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service imap-login {
  chroot =
}
`;

const users = DOVECOT_USERS.map((u) => `${u}:{PLAIN}${DOVECOT_PASSWORD}::::::`).join('\n');

// Written on every start (the folder may be new); the mail folder belongs to the user serving it.
const script = [
  `mkdir -p ${dir}/run ${dir}/state ${dir}/mail`,
  `cat > ${dir}/dovecot.conf <<'EOF'\n${config}\nEOF`,
  `cat > ${dir}/users <<'EOF'\n${users}\nEOF`,
  ...(asRoot ? [`chown -R ${user}:${user} ${dir}/mail`] : []),
  `exec /usr/sbin/dovecot -F -c ${dir}/dovecot.conf`,
].join('\n');

export default {
  name: 'dovecot',
  neededBy: 'all',
  program: '/usr/sbin/dovecot',
  install: 'apt-get install -y dovecot-imapd',
  address: `imap://127.0.0.1:${port}`,
  ready: () => answers('127.0.0.1', port, 'a LOGOUT\r\n', /^\* OK/),
  start: { command: '/bin/sh', args: ['-c', script] },
} satisfies Peer;
