// A local receiver of Flows events: verifies each delivery's Standard Webhooks signature with the
// subscription's secret and prints the event. Run it from the repository (it uses the standardwebhooks
// package Flows depends on):
//   FLOWS_EVENT_SECRET=whsec_… node examples/event-receiver.mjs        (listens on 127.0.0.1:4000)
// Flows sends events to this machine only when started with FLOWS_ALLOW_PRIVATE_NETWORK=true.
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.FLOWS_EVENT_SECRET;
if (!secret) {
  console.error('Set FLOWS_EVENT_SECRET to the signingSecret of your event subscription.');
  process.exit(1);
}
const webhook = new Webhook(secret);
const port = Number(process.env.PORT ?? 4000);

createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    try {
      const event = webhook.verify(body, req.headers);
      console.log(`verified ${req.headers['webhook-id']}: ${event.type} ${JSON.stringify(event.data).slice(0, 200)}`);
      res.writeHead(204).end();
    } catch (err) {
      console.log(`refused a delivery: ${err.message}`);
      res.writeHead(400).end();
    }
  });
}).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/`));
