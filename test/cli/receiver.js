// A webhook receiver for test/cli/stripecli.sh: one JSON line per request, whether its
// Stripe-Signature verifies with the secret `stripe listen` printed.
const http = require('node:http');
const Stripe = require('stripe');
const [port, secret] = process.argv.slice(2);
const stripe = new Stripe('sk_test_unused');
http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      let type = null;
      try {
        type = stripe.webhooks.constructEvent(body, req.headers['stripe-signature'], secret).type;
        verified = true;
      } catch {
        type = JSON.parse(body).type;
      }
      process.stdout.write(`${JSON.stringify({ type, verified })}\n`);
      res.writeHead(verified ? 200 : 400).end('ok');
    });
  })
  .listen(Number(port), '127.0.0.1');
