import type { Position } from './errors.js'

/** The parse tree of a Go text/template, as text/template/parse builds it (without define, template and block). */
export type Node = TextNode | ActionNode | IfNode | RangeNode | WithNode | BreakNode | ContinueNode

export interface TextNode { kind: 'text'; text: string; position: Position }
/** `{{pipeline}}`: prints the pipeline's value, unless the pipeline declares or assigns variables. */
export interface ActionNode { kind: 'action'; pipe: Pipeline; position: Position }
export interface IfNode { kind: 'if'; pipe: Pipeline; list: Node[]; elseList: Node[] | null; position: Position }
export interface WithNode { kind: 'with'; pipe: Pipeline; list: Node[]; elseList: Node[] | null; position: Position }
export interface RangeNode { kind: 'range'; pipe: Pipeline; list: Node[]; elseList: Node[] | null; position: Position }
export interface BreakNode { kind: 'break'; position: Position }
export interface ContinueNode { kind: 'continue'; position: Position }

export interface Pipeline {
  /** `$x :=` declares, `$x =` assigns; range may declare two (`$i, $e :=`). */
  isAssign: boolean
  variables: VariableRef[]
  commands: Command[]
  position: Position
}

/** One stage of a pipeline: a function with its arguments, or a single operand. */
export interface Command { args: Operand[]; position: Position }

export type Operand =
  | { kind: 'dot'; position: Position }
  | { kind: 'field'; names: string[]; position: Position }
  | { kind: 'variable'; variable: VariableRef; names: string[]; position: Position }
  | { kind: 'function'; name: string; position: Position }
  | { kind: 'string'; value: string; position: Position }
  | { kind: 'number'; value: number; text: string; position: Position }
  | { kind: 'bool'; value: boolean; position: Position }
  | { kind: 'nil'; position: Position }
  | { kind: 'pipeline'; pipe: Pipeline; names: string[]; position: Position }

/** A variable as the parser resolved it: `$` is the root; every declaration gets its own id. */
export interface VariableRef { name: string; id: number; position: Position }
