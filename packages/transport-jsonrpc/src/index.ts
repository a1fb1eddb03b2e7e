export * from "./http.ts";
