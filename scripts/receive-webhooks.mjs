#!/usr/bin/env node
// A webhook receiver for trying the API by hand: listens on PORT (default 4000), verifies every
// delivery's Standard Webhooks signature with WEBHOOK_SECRET (the endpoint's `whsec_…` secret)
// using the `standardwebhooks` library, and prints each verified event. Unverifiable deliveries
// are answered 400 and reported.
import { createServer } from "node:http";
import { Webhook } from "standardwebhooks";

const secret = process.env.WEBHOOK_SECRET;
if (!secret?.startsWith("whsec_")) {
  console.error("Set WEBHOOK_SECRET to the endpoint's secret (whsec_…).");
  process.exit(1);
}
const webhook = new Webhook(secret.slice("whsec_".length));
const port = Number(process.env.PORT ?? 4000);

createServer((request, response) => {
  let body = "";
  request.setEncoding("utf8");
  request.on("data", (chunk) => {
    body += chunk;
  });
  request.on("end", () => {
    try {
      // Verify the raw body exactly as received, before parsing it.
      const event = webhook.verify(body, {
        "webhook-id": request.headers["webhook-id"] ?? "",
        "webhook-timestamp": request.headers["webhook-timestamp"] ?? "",
        "webhook-signature": request.headers["webhook-signature"] ?? "",
      });
      console.log(`verified ${request.headers["webhook-id"]}: ${JSON.stringify(event)}`);
      response.writeHead(204).end();
    } catch (error) {
      console.error(`refused a delivery: ${error.message}`);
      response.writeHead(400).end();
    }
  });
}).listen(port, "127.0.0.1", () => console.log(`receiving webhooks on http://127.0.0.1:${port}/`));
