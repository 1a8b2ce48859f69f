import { z } from "@hono/zod-openapi";
import { TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { PLANS } from "./account";

/** A password an account may be given (on signup, on a change): 10–256 characters of text. */
const NewPasswordSchema = textSchema().min(10).max(256);

/** A password to check against the stored one: any string, since a wrong one of any length is just wrong. */
const GivenPasswordSchema = z.string().max(1024);

export const CredentialsSchema = z
  .strictObject({
    email: textSchema().trim().max(254).pipe(z.email()).openapi({ example: "ada@example.com" }),
    password: NewPasswordSchema.openapi({ example: "correct horse battery" }),
  })
  .openapi("Credentials");

/** Login takes any strings: a wrong password of any length is just wrong (invalid_credentials). */
export const LoginSchema = z
  .strictObject({
    email: z.string().trim().max(254).openapi({ example: "ada@example.com" }),
    password: GivenPasswordSchema.openapi({ example: "correct horse battery" }),
  })
  .openapi("Login");

export const PasswordChangeSchema = z
  .strictObject({
    currentPassword: GivenPasswordSchema.openapi({
      description: "The password the account has now; a wrong one counts as a failed login of this client",
      example: "correct horse battery",
    }),
    newPassword: NewPasswordSchema.openapi({
      description: "10–256 characters, as on signup",
      example: "battery staple horse correct",
    }),
  })
  .openapi("PasswordChange");

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
