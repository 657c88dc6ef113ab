import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, api, formatDetail, queryString, request, setUnauthorizedHandler } from "./client";

function jsonResponse(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

afterEach(() => setUnauthorizedHandler(null));

describe("formatDetail", () => {
  it("reads strings, 422 lists and objects", () => {
    expect(formatDetail("Conversation not found")).toBe("Conversation not found");
    expect(
      formatDetail([
        { loc: ["body", "message"], msg: "Field required" },
        { loc: ["query", "page_size"], msg: "must be ≤ 100" },
      ]),
    ).toBe("message: Field required; page_size: must be ≤ 100");
    expect(formatDetail({ message: "busy" })).toBe("busy");
    expect(formatDetail(null)).toBe("");
  });
});

describe("queryString", () => {
  it("skips empty values and repeats array keys", () => {
    expect(queryString({ condition: "nsclc", sponsor: "", phase: ["PHASE3", "PHASE2"], status: [], page_size: 25, token: null })).toBe(
      "?condition=nsclc&phase=PHASE3&phase=PHASE2&page_size=25",
    );
    expect(queryString({})).toBe("");
  });
});

describe("request", () => {
  it("turns {error, detail} into an ApiError with a readable message", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => jsonResponse(409, { error: "conflict", detail: "A turn is already running" })));
    const err = await request("GET", "/api/x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ message: "A turn is already running", status: 409, code: "conflict", retryable: false });
    vi.unstubAllGlobals();
  });

  it("calls the unauthorized handler on 401, except where 401 is an answer", async () => {
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    vi.stubGlobal("fetch", vi.fn(async () => jsonResponse(401, { error: "unauthorized", detail: "Sign in" })));
    await expect(api.getConversation(1)).rejects.toMatchObject({ status: 401 });
    expect(handler).toHaveBeenCalledTimes(1);
    await expect(api.login("a", "b")).rejects.toMatchObject({ message: "Sign in" });
    expect(handler).toHaveBeenCalledTimes(1);
    vi.unstubAllGlobals();
  });

  it("reports a network failure as retryable", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => Promise.reject(new TypeError("Failed to fetch"))));
    await expect(api.health()).rejects.toMatchObject({ status: 0, retryable: true });
    vi.unstubAllGlobals();
  });
});
