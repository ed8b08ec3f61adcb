import type { Node, Operand, Pipeline } from './ast.js'

/** The webhook tags a template reads with `fromWebhook`: literal ones by name; `dynamic` when a tag is computed at render time. */
export interface FromWebhookReferences {
  tags: ReadonlySet<string>
  dynamic: boolean
}

/** `fromWebhook "tag" "query"`, `"query" | fromWebhook "tag"`: the tag is always the first written argument. */
export const fromWebhookReferences = (nodes: readonly Node[]): FromWebhookReferences => {
  const tags = new Set<string>()
  let dynamic = false
  const operand = (value: Operand): void => {
    if (value.kind === 'pipeline') pipeline(value.pipe)
  }
  const pipeline = (pipe: Pipeline): void => {
    for (const command of pipe.commands) {
      const [head, tag] = command.args
      if (head?.kind === 'function' && head.name === 'fromWebhook') {
        if (tag?.kind === 'string') tags.add(tag.value)
        else dynamic = true
      }
      command.args.forEach(operand)
    }
  }
  const visit = (list: readonly Node[]): void => {
    for (const node of list) {
      switch (node.kind) {
        case 'action':
          pipeline(node.pipe)
          break
        case 'if':
        case 'with':
        case 'range':
          pipeline(node.pipe)
          visit(node.list)
          if (node.elseList !== null) visit(node.elseList)
          break
        case 'text':
        case 'break':
        case 'continue':
          break
        default: {
          const _never: never = node
          return _never
        }
      }
    }
  }
  visit(nodes)
  return { tags, dynamic }
}
