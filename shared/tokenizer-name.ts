/** The one tokenizer every token figure is counted with (kept apart so importing the name is free). */
export const TOKENIZER = "o200k_base";
