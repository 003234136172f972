// The persona fields of the agent contract (src/chatmem/agents/service.py AgentIn) with their
// limits, in the order the editor shows them. A test compares the limits with the OpenAPI schema.
import type { MessageKey } from "../i18n/en";

export interface PersonaField {
  name:
    | "name"
    | "handle"
    | "headline"
    | "description"
    | "story_background"
    | "personality_prompt"
    | "tone_prompt"
    | "guardrails_prompt"
    | "opening_message"
    | "default_prompt"
    | "image_key";
  label: MessageKey;
  max: number;
  required?: boolean;
  long?: boolean;
}

export const PROMPT_MAX = 4000;

export const PERSONA_FIELDS: PersonaField[] = [
  { name: "name", label: "personaName", max: 120, required: true },
  { name: "handle", label: "personaHandle", max: 120, required: true },
  { name: "headline", label: "personaHeadline", max: 200 },
  { name: "description", label: "personaDescription", max: 2000, long: true },
  { name: "opening_message", label: "personaOpening", max: 2000, long: true },
  { name: "personality_prompt", label: "personaPersonality", max: PROMPT_MAX, long: true },
  { name: "tone_prompt", label: "personaTone", max: PROMPT_MAX, long: true },
  { name: "story_background", label: "personaStory", max: PROMPT_MAX, long: true },
  { name: "guardrails_prompt", label: "personaGuardrails", max: PROMPT_MAX, long: true },
  { name: "default_prompt", label: "personaDefaultPrompt", max: PROMPT_MAX, long: true },
  { name: "image_key", label: "personaImage", max: 500 },
];

export const VISIBILITIES = ["private", "public"] as const;
export const STATUSES = ["draft", "published", "archived"] as const;
