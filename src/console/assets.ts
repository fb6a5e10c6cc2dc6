import { consoleScript } from './bundle' with { type: 'macro' }
import style from './web/console.css' with { type: 'text' }

/** The console's script and style sheet, carried in the gateway (docs/operations.md#console). */
export const CONSOLE_SCRIPT: string = consoleScript()
export const CONSOLE_STYLE: string = style
