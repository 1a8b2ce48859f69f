import { z } from "@hono/zod-openapi";
import { TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { PLANS } from "./account";

export const CredentialsSchema = z
  .strictObject({
    email: textSchema().trim().max(254).pipe(z.email()).openapi({ example: "ada@example.com" }),
    password: textSchema().min(10).max(256).openapi({ example: "correct horse battery" }),
  })
  .openapi("Credentials");

/** Login takes any strings: a wrong password of any length is just wrong (invalid_credentials). */
export const LoginSchema = z
  .strictObject({
    email: z.string().trim().max(254).openapi({ example: "ada@example.com" }),
    password: z.string().max(1024).openapi({ example: "correct horse battery" }),
  })
  .openapi("Login");

export const AccountSchema = z
  .object({
    id: UlidSchema,
    email: z.string().openapi({ example: "ada@example.com" }),
    approved: z.boolean(),
    plan: z.enum(PLANS),
    trialEndsAt: TimestampSchema,
    createdAt: TimestampSchema,
  })
  .openapi("Account");
