import { createServer } from 'node:http';
import { SMTPServer } from 'smtp-server';

/*
 * The loopback SMTP relay of `rz-auth-mail`: the nodemailer project's smtp-server on SMTP_PORT,
 * accepting every message and discarding it. Its HTTP port (PORT) answers any GET with how many
 * messages it has accepted, which the harness reads around a slice for the mails sent per second.
 */
let accepted = 0;
new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onData(stream, _session, callback) {
    stream.resume();
    stream.on('end', () => {
      accepted += 1;
      callback();
    });
  },
}).listen(Number(process.env.SMTP_PORT), '127.0.0.1');

createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(String(accepted))).listen(Number(process.env.PORT), '127.0.0.1');
