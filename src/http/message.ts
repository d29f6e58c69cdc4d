// Turning whatever a server answers into one short line. The spec does not show the error
// body format (spec 7), so every common shape is accepted.
import { STATUS_CODES } from 'node:http';
import { oneLine } from '../io/text.js';

/** Columns of a server's message in an error line: it stays one readable line. */
export const MESSAGE_COLUMNS = 200;

// A Map: the entity name is the server's text (`&constructor;` is no entity).
const ENTITIES = new Map([['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"], ['nbsp', ' ']]);

/** The text of an HTML page: its <title> when it has one, else the body without tags. */
export function htmlToText(html: string): string {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  const source = title?.trim() ? title : html.replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, ' ');
  const text = source
    .replace(/<!--[\s\S]*?-->/g, ' ')
    // Inline tags vanish ("<b>gone</b>." → "gone."); any other tag separates words.
    .replace(/<\/?(a|b|i|em|strong|span|code|small|abbr)\b[^>]*>/gi, '')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (whole, name: string) => {
      if (name.startsWith('#')) {
        const cp = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
        // `&#x110000;` is past Unicode: shown as written, not a RangeError while building an error.
        return cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
      }
      return ENTITIES.get(name.toLowerCase()) ?? whole;
    });
  return oneLine(text, MESSAGE_COLUMNS);
}

/** Bare reason phrases ("Not Found"): a body holding one next to a real message should show the message. */
const REASONS = new Set(Object.values(STATUS_CODES).map((r) => String(r).toLowerCase()));

function fromJson(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // {"errors": [{"message": "..."}]} (JSON:API, GraphQL): the first one.
  if (Array.isArray(value)) return value.length > 0 ? fromJson(value[0]) : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  const record = value as Record<string, unknown>;
  let generic: string | undefined;
  for (const key of ['error', 'reason', 'message', 'detail', 'msg', 'error_description', 'errors', 'title']) {
    const inner = record[key];
    // {"error": {"message": "..."}} and similar nestings.
    const found = typeof inner === 'string' ? inner : inner && typeof inner === 'object' ? fromJson(inner) : undefined;
    if (found === undefined || !found.trim()) continue;
    // {"statusCode":404,"error":"Not Found","message":"No card 42"} (Fastify, hapi): the message says more.
    if (REASONS.has(found.trim().toLowerCase())) {
      generic ??= found;
      continue;
    }
    return found;
  }
  return generic;
}

function looksLikeHtml(text: string, contentType: string): boolean {
  return /html/i.test(contentType) || /^\s*(<!doctype html|<html|<head|<body)/i.test(text);
}

/**
 * The server's message from an error body of any shape (JSON, plain text, HTML), or undefined when empty:
 * one line, escaped and cut as every line for a person is (oneLine).
 */
export function extractServerMessage(text: string, contentType = ''): string | undefined {
  if (!text.trim()) return undefined;
  if (/json/i.test(contentType) || /^\s*[{["]/.test(text)) {
    try {
      const found = fromJson(JSON.parse(text));
      if (found !== undefined) return oneLine(found, MESSAGE_COLUMNS) || undefined;
    } catch {
      // Not JSON after all: fall through to text.
    }
  }
  return (looksLikeHtml(text, contentType) ? htmlToText(text) : oneLine(text, MESSAGE_COLUMNS)) || undefined;
}

const MAX_RETRY_AFTER_S = 1e9;

/**
 * Retry-After (RFC 9110 10.2.3) as whole seconds, as the server said it: 0 for `0` or a date already past
 * (classify in failure.ts raises every wait to the retry floor); undefined when absent or invalid (`-5`, `soon`).
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  // Capped at about 31 years: a 400-digit number would otherwise be Infinity and print as `Infinityd`.
  if (/^\d+$/.test(trimmed)) return Math.min(MAX_RETRY_AFTER_S, Number.parseInt(trimmed, 10));
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
