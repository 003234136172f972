// The wire shapes the app reads, named after the server's response models (generated into
// schema.d.ts by `make web-api` from the app's OpenAPI document).
import type { components } from "./schema";

export type Schemas = components["schemas"];

export type Message = Schemas["MessageOut"];
export type Block = Schemas["Block"];
export type Conversation = Schemas["ConversationOut"];
export type User = Schemas["UserOut"];
export type Project = Schemas["ProjectOut"];
export type Model = Schemas["ModelOut"];
export type SearchResult = Schemas["SearchResults"];
export type PathPage = Schemas["MessagePage"];

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}
