// The titles a conversation has before its first turn names it (the server's i18n.DEFAULT_TITLES).
export const DEFAULT_TITLES = ["", "New chat", "新对话"];
