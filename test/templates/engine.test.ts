import t, { type Test } from 'tap'
import { compileTemplate, compiledTemplateCount } from '../../src/templates/compile.js'
import { emptyTemplateContext, type TemplateContext } from '../../src/templates/context.js'
import { TemplateExecutionError, TemplateSyntaxError } from '../../src/templates/errors.js'
import type { RenderLimits } from '../../src/templates/runtime.js'

const env = {
  now: new Date('2026-01-15T12:34:56.789Z'),
  fromWebhook: (tag: string, query: string) => (tag === 'scoring' && query === 'score' ? 742 : null),
}

const credit = (): TemplateContext => {
  const base = emptyTemplateContext()
  const installment = (n: number) => ({
    ID: `i-${n}`, Number: n, Amount: '760000.25', DueDate: `2026-0${n + 1}-15`, Principal: '0', Interest: '0', PaidPrincipal: '0', PaidInterest: '0', WaivedInterest: '0', PaidAmount: '0',
    Outstanding: '760000.25', Status: 'pending', PaidAt: '', DaysPastDue: 0,
  })
  return {
    ...base,
    Credit: {
      ...base.Credit,
      ID: 'c-1', Status: 'Desembolsado', Principal: '1500000.50', Term: 2, Currency: 'COP', DisbursedAt: '2026-01-10T15:00:00.000Z',
      Installments: [installment(1), installment(2)],
      Debtor: {
        ...base.Credit.Debtor, ID: 'd-1', Type: 'natural', Name: 'Ana Gómez',
        Natural: { ...base.Credit.Debtor.Natural, FirstName: 'Ana', LastName: 'Gómez', WorkCertificateFileID: 'f-9' },
      },
    },
  }
}

const render = (source: string, data: unknown = credit()) => compileTemplate(source).render(data, env)
const renderWithin = (source: string, limits: Partial<RenderLimits>) => compileTemplate(source).render(credit(), env, limits)

/** A list holding itself twice, `times` over: 2^times strings of 8 characters, built in `times` calls. */
const doubled = (times: number) => `{{ $x := "abcdefgh" }}{{ range ${times} }}{{ $x = list $x $x }}{{ end }}`

const syntaxError = (tt: Test, source: string, pattern: RegExp, line?: number, column?: number) => {
  try {
    compileTemplate(source)
    tt.fail(`accepted ${source}`)
  } catch (error) {
    tt.ok(error instanceof TemplateSyntaxError, `${source}: a syntax error`)
    if (!(error instanceof TemplateSyntaxError)) return
    tt.match(error.reason, pattern, source)
    if (line !== undefined) tt.same(error.position, { line, column }, `${source}: position`)
  }
}

t.test('text, field chains, variables and the root variable', async (t) => {
  t.equal(render('plain text'), 'plain text')
  t.equal(render('{{ .Credit.ID }}/{{ .Credit.Debtor.Natural.FirstName }}'), 'c-1/Ana')
  t.equal(render('{{ $c := .Credit }}{{ $c.Status }} {{ $.Credit.Currency }}'), 'Desembolsado COP')
  t.equal(render('{{ $x := 1 }}{{ $x = 2 }}{{ $x }}'), '2', 'assignment changes a declared variable')
  t.equal(render('{{ .Credit.Debtor.Natural.WorkCertificateFileID }}'), 'f-9', 'profile file ids by <Campo>FileID')
  t.equal(render('{{ .Credit.Debtor.Legal.ChamberOfCommerceCertificateFileID | printf "%q" }}'), '""', 'every campo of the person type is present')
  t.equal(render('{{ "a\\tb\\u00e9" }}|{{ `raw\\n` }}|{{ 0x1F }}|{{ 1_000 }}|{{ -2.5 }}|{{ 1.5e3 }}|{{ true }}|{{ default "d" nil }}'), 'a\tbé|raw\\n|31|1000|-2.5|1500|true|d')
  t.equal(render('{{ 017 }}|{{ -0_17 }}|{{ 0o17 }}|{{ 00 }}|{{ 0 }}|{{ 017.5 }}|{{ 09.5 }}|{{ 0e3 }}'), '15|-15|15|0|0|17.5|9.5|0',
    'as in Go, a leading 0 makes an integer octal; a point or an exponent makes a decimal float')
  t.throws(() => render('{{ 09 }}'), /bad number syntax: 09 \(a leading 0 makes an octal integer\)/)
})

t.test('the root variable $ may be assigned, as in Go, and the dot stays the data', async (t) => {
  t.equal(render('{{ $ = 1 }}x{{ $ }}'), 'x1')
  t.equal(render('{{ $ = "a" }}{{ .Credit.ID }}{{ with .Credit }}{{ $ }}{{ end }}'), 'c-1a')
  t.equal(render('{{ if true }}{{ $ = 2 }}{{ end }}{{ $ }}'), '2', 'an assignment inside a block changes the variable')
  t.throws(() => render('{{ $ = 1 }}{{ $.Credit.ID }}'), TemplateExecutionError, 'a field of what $ now holds follows the value\'s rules')
})

t.test('pipelines pass the value as the last argument; parentheses group', async (t) => {
  t.equal(render('{{ .Credit.Status | lower | printf "%s!" }}'), 'desembolsado!')
  t.equal(render('{{ (index .Credit.Installments 1).Amount }}'), '760000.25')
  t.equal(render('{{ printf "%s-%s" (upper "a") ("b" | upper) }}'), 'A-B')
})

t.test('if / else if / else and with / else with', async (t) => {
  const source = '{{ if eq .Credit.Status "Aprobado" }}A{{ else if eq .Credit.Status "Desembolsado" }}D{{ else }}X{{ end }}'
  t.equal(render(source), 'D')
  t.equal(render(source, emptyTemplateContext()), 'X')
  t.equal(render('{{ with .Credit.Debtor.Natural }}{{ .FirstName }}{{ end }}'), 'Ana', 'with moves the dot')
  t.equal(render('{{ with .Credit.Debtor.Name }}{{ . }}{{ else }}nobody{{ end }}', emptyTemplateContext()), 'nobody')
  t.equal(render('{{ with .Credit.CancelledAt }}c{{ else with .Credit.DisbursedAt }}{{ . }}{{ end }}'), '2026-01-10T15:00:00.000Z')
  t.equal(render('{{ if $s := .Credit.Status }}{{ $s }}{{ end }}'), 'Desembolsado', 'a variable declared in the condition')
})

t.test('range over lists, maps and integers, with index and element variables, else, break and continue', async (t) => {
  t.equal(render('{{ range $i, $e := .Credit.Installments }}{{ if $i }},{{ end }}{{ $i }}:{{ $e.Number }}={{ .Amount }}{{ end }}'), '0:1=760000.25,1:2=760000.25')
  t.equal(render('{{ range $e := .Credit.Installments }}{{ $e.ID }} {{ end }}'), 'i-1 i-2 ', 'one variable is the element')
  t.equal(render('{{ range .Credit.Installments }}x{{ else }}none{{ end }}', emptyTemplateContext()), 'none')
  t.equal(render('{{ range $k, $v := dict "b" 2 "a" 1 }}{{ $k }}{{ $v }}{{ end }}'), 'a1b2', 'maps in key order')
  t.equal(render('{{ range 3 }}{{ . }}{{ end }}'), '012')
  t.equal(render('{{ range $i, $e := list 1 2 3 4 }}{{ if eq $e 2 }}{{ continue }}{{ end }}{{ if gt $e 3 }}{{ break }}{{ end }}{{ $e }}{{ end }}'), '13')
  t.equal(render('{{ $t := 0 }}{{ range .Credit.Installments }}{{ $t = addf $t .Amount }}{{ end }}{{ $t }}'), '1520000.5', 'an outer variable assigned in a loop')
})

t.test('whitespace trimming with {{- and -}}, and comments', async (t) => {
  t.equal(render('a  \n {{- .Credit.ID -}} \n  b'), 'ac-1b')
  t.equal(render('{\n  {{- range .Credit.Installments }}\n  "{{ .Number }}"\n  {{- end }}\n}'), '{\n  "1"\n  "2"\n}')
  t.equal(render('a{{/* a comment */}}b{{- /* trimmed */ -}}  c'), 'abc')
  t.equal(render('{{ -3 }}'), '-3', 'a minus without a space is a number')
})

t.test('comparison and logic functions', async (t) => {
  t.equal(render('{{ eq 1 1 }} {{ eq "a" "b" "a" }} {{ ne 1 2 }} {{ lt 1 2 }} {{ le 2 2 }} {{ gt 3 2 }} {{ ge 1 2 }}'), 'true true true true true true false')
  t.equal(render('{{ lt "9.5" "10" }} {{ gt .Credit.Principal 1000000 }} {{ eq .Credit.Term 2 }}'), 'true true true', 'decimal strings compare as numbers')
  t.equal(render('{{ lt "b" "ab" }} {{ lt "\\uFF21" "\\U0001F600" }} {{ gt "\\U0001F600" "\\uFFFF" }}'), 'false true true', 'other strings compare as Go compares them, byte by byte in UTF-8')
  const astralLast = 'dict "\\U0001F600" 1 "\\uFF21" 2'
  t.equal(render(`{{ sortAlpha (list "\\U0001F600" "\\uFF21") }}|{{ keys (${astralLast}) }}|{{ values (${astralLast}) }}|{{ range $k, $v := ${astralLast} }}{{ $k }}{{ end }}|{{ ${astralLast} }}|{{ ${astralLast} | toJson }}`),
    '[\uFF21 \u{1F600}]|[\uFF21 \u{1F600}]|[2 1]|\uFF21\u{1F600}|map[\uFF21:2 \u{1F600}:1]|{"\uFF21":2,"\u{1F600}":1}', 'and so sort and range as Go: sortAlpha, keys, values, range, printed maps, toJson')
  t.equal(render('{{ and 1 "" 3 }}|{{ and 1 2 }}|{{ or "" 0 "x" }}|{{ or "" 0 }}|{{ not "" }}'), '|2|x|0|true')
  t.equal(render('{{ if and .Credit.ID (eq .Credit.Status "Desembolsado") }}yes{{ end }}'), 'yes')
  t.equal(render('{{ or .Credit.ID (fail "never evaluated") }}'), 'c-1', 'and/or stop at the deciding argument')
  t.throws(() => render('{{ lt (list 1) 2 }}'), TemplateExecutionError, 'lists do not compare')
})

t.test('printf, print, println, len, index, slice, html, js, urlquery', async (t) => {
  t.equal(render('{{ printf "%s|%d|%5.2f|%-4s|%04d|%x|%q|%t|%v|%%|%e" "a" 42 3.14159 "ab" 7 255 "q" true (list 1 "b") 1500 }}'),
    'a|42| 3.14|ab  |0007|ff|"q"|true|[1 b]|%|1.500000e+03')
  t.equal(render('{{ printf "%.2f" .Credit.Principal }} {{ printf "%d" "abc" }} {{ printf "%d" }} {{ printf "x" 1 }}'),
    '1500000.50 %!d(string=abc) %!d(MISSING) x%!(EXTRA int=1)')
  t.equal(render('{{ print "a" 1 2 "b" }}|{{ println 1 2 }}'), 'a1 2b|1 2\n')
  t.equal(render('{{ len .Credit.Installments }} {{ len "Gómez" }} {{ len (dict "a" 1) }}'), '2 5 1')
  t.equal(render('{{ index (dict "a" (list 5 6)) "a" 1 }} {{ slice "abcdef" 1 3 }} {{ slice (list 1 2 3) 1 }}'), '6 bc [2 3]')
  t.equal(render('{{ html "<a href=\'x\'>&</a>" }}|{{ js "it\'s \\"q\\"" }}|{{ urlquery "a b&c=d" }}'), '&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;|it\\\'s \\"q\\"|a+b%26c%3Dd')
  t.throws(() => render('{{ index .Credit.Installments 9 }}'), /index out of range: 9/)
})

t.test('Sprig string functions', async (t) => {
  const cases: Array<[string, string]> = [
    ['{{ upper "ab" }}', 'AB'], ['{{ lower "AB" }}', 'ab'], ['{{ title "ana maría" }}', 'Ana María'], ['{{ trim "  x  " }}', 'x'],
    ['{{ trimAll "$" "$$5$" }}', '5'], ['{{ trimPrefix "ab" "abc" }}', 'c'], ['{{ trimSuffix "bc" "abc" }}', 'a'],
    ['{{ trunc 3 "Gómez" }}', 'Góm'], ['{{ trunc -2 "abcd" }}', 'cd'], ['{{ abbrev 6 "abcdefgh" }}', 'abc...'], ['{{ substr 1 3 "abcd" }}', 'bc'],
    ['{{ replace "a" "o" "banana" }}', 'bonono'], ['{{ repeat 3 "ab" }}', 'ababab'], ['{{ contains "an" "banana" }}', 'true'],
    ['{{ hasPrefix "ba" "banana" }}', 'true'], ['{{ hasSuffix "na" "banana" }}', 'true'], ['{{ quote "a\\"b" 1 }}', '"a\\"b" "1"'],
    ['{{ squote "a" }}', "'a'"], ['{{ cat "a" 1 nil "b" }}', 'a 1 b'], ['{{ nospace " a b\\tc " }}', 'abc'],
    ['{{ indent 2 "a\\nb" }}', '  a\n  b'], ['{{ nindent 2 "a" }}', '\n  a'], ['{{ join "," (list 1 2) }}', '1,2'],
    ['{{ splitList "," "a,b" | toJson }}', '["a","b"]'], ['{{ toString 12 }}', '12'],
  ]
  for (const [source, expected] of cases) t.equal(render(source), expected, source)
})

t.test('Sprig lists, maps, defaults and flow', async (t) => {
  const cases: Array<[string, string]> = [
    ['{{ list 1 "a" | toJson }}', '[1,"a"]'], ['{{ first (list 1 2) }} {{ last (list 1 2) }}', '1 2'], ['{{ rest (list 1 2 3) }}', '[2 3]'],
    ['{{ initial (list 1 2 3) }}', '[1 2]'], ['{{ append (list 1) 2 }} {{ prepend (list 1) 0 }}', '[1 2] [0 1]'], ['{{ concat (list 1) (list 2 3) }}', '[1 2 3]'],
    ['{{ reverse (list 1 2) }}', '[2 1]'], ['{{ uniq (list 1 1 2) }}', '[1 2]'], ['{{ compact (list 1 "" 0 2) }}', '[1 2]'], ['{{ has 2 (list 1 2) }}', 'true'],
    ['{{ sortAlpha (list "b" "a") }}', '[a b]'], ['{{ dict "a" 1 "b" 2 | toJson }}', '{"a":1,"b":2}'], ['{{ get (dict "a" 1) "a" }}{{ get (dict) "x" }}', '1'],
    ['{{ hasKey (dict "a" 1) "a" }}', 'true'], ['{{ keys (dict "b" 1 "a" 2) }}', '[a b]'], ['{{ values (dict "b" 1 "a" 2) }}', '[2 1]'],
    ['{{ pick (dict "a" 1 "b" 2) "a" | toJson }}', '{"a":1}'], ['{{ omit (dict "a" 1 "b" 2) "a" | toJson }}', '{"b":2}'],
    ['{{ default "x" "" }} {{ "y" | default "x" }} {{ default "z" }}', 'x y z'], ['{{ empty "" }} {{ empty (list 1) }}', 'true false'],
    ['{{ coalesce "" 0 "c" }}', 'c'], ['{{ ternary "yes" "no" true }}', 'yes'], ['{{ required "needed" "v" }}', 'v'],
  ]
  for (const [source, expected] of cases) t.equal(render(source), expected, source)
  t.throws(() => render('{{ required "the ID is required" .Credit.CreditLineID }}'), /the ID is required/)
  t.throws(() => render('{{ fail "stop here" }}'), /stop here/)
})

t.test('toJson writes a map\'s keys sorted, as Go\'s encoding/json, and the context\'s objects in their field order', async (t) => {
  t.equal(render('{{ dict "b" 1 "a" 2 "10" 3 "9" 4 | toJson }}'), '{"10":3,"9":4,"a":2,"b":1}', 'keys in Go\'s order, "10" before "9"')
  t.equal(render('{{ fromJson "{\\"z\\":{\\"y\\":[{\\"b\\":1,\\"a\\":2}],\\"x\\":null},\\"a\\":true}" | toJson }}'),
    '{"a":true,"z":{"x":null,"y":[{"a":2,"b":1}]}}', 'nested maps too')
  t.equal(render('{{ dict "b" (list 1 (dict "d" 1 "c" 2)) "a" (dict) | toPrettyJson }}'),
    '{\n  "a": {},\n  "b": [\n    1,\n    {\n      "c": 2,\n      "d": 1\n    }\n  ]\n}')
  const natural = JSON.parse(render('{{ toJson .Credit.Debtor.Natural }}'))
  t.same(Object.keys(natural).slice(0, 2), ['FirstName', 'MiddleName'], 'a struct keeps its field order')
  t.equal(render('{{ toJson (list) }}|{{ toJson nil }}|{{ toJson (list "é" 1.5 true nil) }}'), '[]|null|["é",1.5,true,null]')
  const stored = { fromWebhook: () => ({ z: 1, a: [{ y: 2, b: 3 }] }), now: env.now }
  t.equal(compileTemplate('{{ fromWebhook "crm" "all" | toJson }}|{{ (fromWebhook "crm" "all").z }}').render(credit(), stored),
    '{"a":[{"b":3,"y":2}],"z":1}|1', 'a stored response value is a map too, however it was stored')
})

t.test('Sprig encodings, numbers and dates', async (t) => {
  const cases: Array<[string, string]> = [
    ['{{ toJson .Credit.Debtor.Natural.FirstName }}', '"Ana"'], ['{{ toRawJson (list "<") }}', '["<"]'], ['{{ toPrettyJson (dict "a" 1) }}', '{\n  "a": 1\n}'],
    ['{{ (fromJson "{\\"a\\":[1,2]}").a }}', '[1 2]'], ['{{ b64enc "Gómez" }}', 'R8OzbWV6'], ['{{ b64dec "R8OzbWV6" }}', 'Gómez'],
    ['{{ sha256sum "a" }}', 'ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb'],
    ['{{ add 1 2 3 }} {{ add1 1 }} {{ sub 5 2 }} {{ mul 2 3 }} {{ div 7 2 }} {{ mod 7 2 }} {{ max 1 5 3 }} {{ min 4 2 }}', '6 2 3 6 3 1 5 2'],
    ['{{ addf .Credit.Principal "0.25" }} {{ subf "1" "0.1" }} {{ mulf "1.1" 3 }} {{ divf 1 3 }} {{ maxf "1.5" 1 }} {{ minf "1.5" 1 }}', '1500000.75 0.9 3.3 0.33333333333333333333 1.5 1'],
    ['{{ floor "1.7" }} {{ ceil "1.2" }} {{ round "2.345" 2 }} {{ round 2 2 }}', '1 2 2.35 2.00'],
    ['{{ atoi "42" }} {{ int "3.9" }} {{ int64 7 }} {{ float64 "2.5" }}', '42 3 7 2.5'],
    ['{{ now | date "2006-01-02 15:04:05.000 Mon Jan MST" }}', '2026-01-15 12:34:56.789 Thu Jan UTC'],
    ['{{ date "02/01/06 3:04PM -07:00" .Credit.DisbursedAt }}', '10/01/26 3:00PM +00:00'],
    ['{{ dateInZone "2006-01-02T15:04:05Z07:00" now "America/Bogota" }}', '2026-01-15T07:34:56-05:00'],
    ['{{ date "2006-01-02" .Credit.ApprovedAt }}|{{ unixEpoch now }}', '|1768480496'],
    ['{{ fromWebhook "scoring" "score" }} {{ fromWebhook "scoring" "other" }}', '742 <no value>'],
  ]
  for (const [source, expected] of cases) t.equal(render(source), expected, source)
  t.throws(() => render('{{ div 1 0 }}'), /division by zero/)
  t.throws(() => render('{{ dateInZone "2006" now "Mars/Olympus" }}'), /unknown time zone/)
})

t.test('syntax errors are refused with line and column', async (t) => {
  syntaxError(t, 'ok\n  {{ if .Credit.ID }}', /has no \{\{end\}\}/, 2, 6)
  syntaxError(t, '{{ end }}', /unexpected \{\{end\}\}/)
  syntaxError(t, '{{ .Credit.ID ', /unclosed action/)
  syntaxError(t, '{{ "abc }}', /unterminated quoted string/)
  syntaxError(t, '{{ .Credit.ID | }}', /missing command after \|/)
  syntaxError(t, '{{ $undefined }}', /undefined variable "\$undefined"/, 1, 4)
  syntaxError(t, '{{ break }}', /outside \{\{range\}\}/)
  syntaxError(t, '{{ .Credit.ID .Credit.Status }}', /can't give argument to non-function \.Credit\.ID/)
  syntaxError(t, '{{ upper "a" "b" }}', /wrong number of args for upper: want 1 got 2/)
  syntaxError(t, '{{ .Credit.Debtr.Name }}', /can't evaluate field Debtr in type Credit/, 1, 4)
  syntaxError(t, '{{ range .Credit.Installments }}{{ .Nope }}{{ end }}', /can't evaluate field Nope in type Installments/)
  syntaxError(t, '{{ .Credit.ID.Length }}', /can't evaluate field Length in type string/)
  syntaxError(t, '{{ range .Credit }}{{ end }}', /range can't iterate over Credit/)
  syntaxError(t, '{{ define "x" }}{{ end }}', /not supported/)
  syntaxError(t, '{{ template "x" }}', /not supported/)
  syntaxError(t, '{{ block "x" . }}{{ end }}', /not supported/)
  syntaxError(t, "{{ 'a' }}", /character constants are not supported/)
  syntaxError(t, '{{ 1i }}', /complex numbers are not supported/)
  syntaxError(t, '{{ if .Credit.ID }}a{{ else }}b{{ else }}c{{ end }}', /expected \{\{end\}\}/)
  syntaxError(t, '{{ ($x := 1) }}', /inside parentheses/)
})

t.test('nesting is bounded at 100 levels: a few thousand overflowed the compiler\'s stack', async (t) => {
  const parenthesized = (levels: number) => `{{ ${'('.repeat(levels)}1${')'.repeat(levels)} }}`
  const ifs = (levels: number) => `${'{{ if 1 }}'.repeat(levels)}x${'{{ end }}'.repeat(levels)}`
  const elseIfs = (levels: number) => `{{ if 0 }}${'a{{ else if 0 }}'.repeat(levels - 1)}b{{ else }}z{{ end }}`
  t.equal(render(parenthesized(100)), '1')
  t.equal(render(ifs(100)), 'x')
  t.equal(render(elseIfs(100)), 'z', 'each else if is a level')
  syntaxError(t, parenthesized(101), /nested deeper than 100 levels/, 1, 104)
  syntaxError(t, ifs(101), /nested deeper than 100 levels/)
  syntaxError(t, elseIfs(101), /nested deeper than 100 levels/)
  syntaxError(t, parenthesized(5000), /nested deeper than 100 levels/)
  syntaxError(t, ifs(5000), /nested deeper than 100 levels/)
})

t.test('a template cannot reach JavaScript', async (t) => {
  const attempts: Array<[string, RegExp]> = [
    ['{{ .constructor }}', /field name "constructor" is not allowed/],
    ['{{ .Credit.__proto__ }}', /field name "__proto__" is not allowed/],
    ['{{ $.constructor.constructor "return process" }}', /not allowed/],
    ['{{ (list).constructor }}', /not allowed/],
    ['{{ .Credit.ID.prototype }}', /not allowed/],
    ['{{ .__defineGetter__ }}', /not allowed/],
    ['{{ process.exit }}', /function "process" not defined/],
    ['{{ globalThis }}', /function "globalThis" not defined/],
    ['{{ require "fs" }}', /function "require" not defined/],
    ['{{ eval "1" }}', /function "eval" not defined/],
    ['{{ call .Credit.ID }}', /function "call" not defined/],
    ['{{ toString.call }}', /unexpected field after function/],
    ['<% process.exit() %>{{ .Credit.ID }}', /^$/],
    ['{{ .Credit.Process }}', /can't evaluate field Process/],
  ]
  for (const [source, pattern] of attempts) {
    if (pattern.source === '^$') {
      t.equal(render(source), '<% process.exit() %>c-1', 'eta syntax in the text is just text')
      continue
    }
    syntaxError(t, source, pattern)
  }
  t.equal(render('{{ $m := dict "__proto__" "x" "constructor" "y" }}{{ toJson $m }} {{ index $m "__proto__" }} {{ get (dict) "constructor" }}'),
    '{"__proto__":"x","constructor":"y"} x ', 'map keys are data, never prototypes')
  t.equal(render('{{ index (dict) "constructor" }}|{{ index (dict) "toString" }}|{{ hasKey (dict) "hasOwnProperty" }}'), '<no value>|<no value>|false', 'nothing inherited is visible')
  t.equal(render('{{ with fromJson "{\\"a\\":1}" }}{{ .toString }}|{{ .valueOf }}{{ end }}'), '<no value>|<no value>', 'unchecked data never yields inherited members')
  t.notMatch(compileTemplate('{{ "\\"); process.exit(1); (\\"" }}{{ .Credit.ID }}').etaSource, /process/, 'user text never enters the generated code')
})

t.test('fields of data without a known shape follow Go map semantics at render time', async (t) => {
  t.equal(render('{{ (fromJson "{\\"a\\":{\\"b\\":1}}").a.b }}'), '1')
  t.equal(render('{{ (fromJson "{}").missing }}'), '<no value>')
  t.throws(() => render('{{ (fromJson "{}").missing.deeper }}'), /nil pointer evaluating/)
  t.throws(() => render('{{ (fromJson "\\"text\\"").field }}'), /can't evaluate field field in type string/)
})

t.test('renders are bounded in output, work and repetition', async (t) => {
  t.throws(() => compileTemplate('{{ range 100 }}0123456789{{ end }}').render(credit(), env, { maxOutput: 500 }), /exceeds 500 characters/)
  t.throws(() => compileTemplate('{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}').render(credit(), env, { maxSteps: 10_000 }), /exceeds 10000 steps/)
  t.throws(() => render('{{ repeat 100000000 "ab" }}'), /too large/)
  t.throws(() => render('{{ $s := "ab" }}{{ range 40 }}{{ $s = cat $s $s }}{{ end }}'), /value too large/)
  t.equal(render('{{ printf "%99999d" 1 }}'), '%!(BADWIDTH)')
})

t.test('printing, encoding or comparing a value pays a step per element as it walks: a list nested in itself runs out of steps', async (t) => {
  const walks = [
    '{{ $x }}', '{{ toJson $x }}', '{{ toPrettyJson $x }}', '{{ print $x }}', '{{ println $x }}', '{{ printf "%v" $x }}', '{{ printf "%#v" $x }}',
    '{{ printf "%d" $x }}', '{{ cat $x }}', '{{ quote $x }}', '{{ toString $x }}', '{{ join "," (list $x) }}', '{{ sortAlpha (list $x) }}',
    '{{ has 1 (list $x) }}', '{{ uniq (list $x $x) }}', '{{ html $x }}', '{{ dict $x 1 }}',
  ]
  for (const walk of walks) {
    t.throws(() => renderWithin(`${doubled(16)}${walk}`, { maxSteps: 10_000, maxOutput: 100_000_000 }), /render exceeds 10000 steps/, walk)
  }
  t.equal(renderWithin(`${doubled(2)}{{ $x }} {{ toJson $x }}`, { maxSteps: 100 }), '[[abcdefgh abcdefgh] [abcdefgh abcdefgh]] [["abcdefgh","abcdefgh"],["abcdefgh","abcdefgh"]]', 'a small one is written')
})

t.test('a list doubled 24 times fails at once with the template\'s budget error, before its text is built', async (t) => {
  for (const walk of ['{{ $x }}', '{{ toJson $x }}', '{{ printf "%v" $x }}', '{{ has "a" (list $x) }}', '{{ uniq (list $x) }}']) {
    t.throws(() => render(`${doubled(24)}${walk}`), TemplateExecutionError, walk)
    t.throws(() => render(`${doubled(24)}${walk}`), /render exceeds 1000000 steps|rendered text exceeds 1048576 characters|value too large/, `${walk}: the budget's error, not one of building the text`)
  }
  t.throws(() => render(`${doubled(24)}{{ $x }}`), /rendered text exceeds 1048576 characters/, 'the output limit is checked while the text would grow')
})

t.test('functions pay for the lists and text they read: a loop over a large input runs out of steps', async (t) => {
  const inputs = '{{ $l := splitList "" (repeat 50000 "a") }}{{ $e := splitList "," (repeat 50000 ",") }}{{ $s := repeat 500000 "a" }}'
  const calls = [
    'has "b" $l', 'uniq $l', 'sortAlpha $l', 'join "" $l', 'compact $e', 'len $s', 'trunc 2 $s', 'upper $s', 'contains "b" $s', 'replace "a" "b" $s',
    'splitList "b" $s', 'sha256sum $s', 'indent 2 $s', 'nindent 2 $s', 'eq $s "b"', 'toJson $s', 'print $s', 'printf "%.1s" $s',
  ]
  for (const call of calls) {
    t.throws(() => renderWithin(`${inputs}{{ range 20 }}{{ $y := ${call} }}{{ end }}`, { maxSteps: 500_000 }), /render exceeds 500000 steps/, call)
  }
  t.equal(renderWithin(`${inputs}{{ len (uniq $l) }} {{ has "a" $l }} {{ len $s }}`, { maxSteps: 500_000 }), '1 true 500000', 'once is within the budget')
})

t.test('uniq and has take one pass: 20,000 distinct elements are deduplicated at once, as Go compares them', async (t) => {
  const distinct = Array.from({ length: 20_000 }, (_, i) => String.fromCodePoint(0x4e00 + i)).join('')
  t.equal(render(`{{ len (uniq (splitList "" "${distinct}")) }}`), '20000')
  t.equal(render('{{ uniq (list 1 "1" 1 (list 1) (list 1) nil nil "a" "a") | toJson }}'), '[1,"1",[1],null,"a"]', 'equal as JSON text, as before')
  t.equal(render('{{ has "2026-01-15T12:34:56.789Z" (list now) }} {{ has 1 (list "1") }}'), 'true false')
})

t.test('range N counts N steps once, so a million iterations fit the budget; a range ended early pays only for what it ran', async (t) => {
  t.equal(render('{{ range 900000 }}{{ end }}'), '')
  t.equal(render('{{ range 1000000 }}{{ end }}'), '')
  t.throws(() => render('{{ range 1000001 }}{{ end }}'), /render exceeds 1000000 steps/)
  t.equal(render('{{ range $i := 1000000000 }}{{ if eq $i 2 }}{{ break }}{{ end }}{{ $i }}{{ end }}'), '01')
  const broken = '{{ $l := splitList "" (repeat 200000 "a") }}{{ range 100000 }}{{ range $l }}{{ break }}{{ end }}{{ end }}done'
  t.equal(render(broken), 'done', 'a range ended at once pays one step, not the list\'s length')
})

t.test('text a function would build beyond the output limit is refused before it is built', async (t) => {
  t.throws(() => render('{{ replace "" (repeat 1000000 "y") (repeat 1000000 "x") }}'), /error calling replace: replace would be 1000000000000 characters, more than 1048576/)
  t.throws(() => render('{{ indent 1000000 (repeat 100000 "\\n") }}'), /error calling indent: indent would be \d+ characters/)
  t.throws(() => render('{{ repeat 2000000 "a" }}'), /repeat: 2000000 × 1 characters is too large/)
})

t.test('calls that parse decimals or times cost several steps, and multiplying long decimals pays for its digits', async (t) => {
  t.equal(render('{{ $x := 0 }}{{ range 100000 }}{{ $x = add1 $x }}{{ end }}{{ $x }}'), '100000')
  t.throws(() => render('{{ $x := 0 }}{{ range 200000 }}{{ $x = add1 $x }}{{ end }}'), /render exceeds 1000000 steps/)
  t.throws(() => render('{{ range 25000 }}{{ $y := dateInZone "15:04 MST" now "America/Bogota" }}{{ end }}'), /render exceeds 1000000 steps/)
  const digits = '9'.repeat(500)
  t.throws(() => render(`{{ $x := "${digits}" }}{{ range 2000 }}{{ $y := mulf $x $x }}{{ end }}`), /render exceeds 1000000 steps/)
  t.equal(render(`{{ gt "1.${'0'.repeat(4094)}" 0 }}`), 'true', 'a decimal string of 4,096 characters is a number')
  t.throws(() => render(`{{ gt "1.${'0'.repeat(4095)}" 0 }}`), /incompatible types for comparison: string and int/, 'a longer one is text')
})

t.test('a Go layout pays for each of its characters and title for each of the text\'s: a long one fails at once, a normal one stays cheap', async (t) => {
  const layout = '{{ $l := repeat 20000 "2006-01-02T15:04:05.000Z07:00 " }}'
  t.throws(() => render(`${layout}{{ $d := date $l now }}`), /render exceeds 1000000 steps/, 'a 620,000-character layout')
  t.throws(() => render(`${layout}{{ $d := dateInZone $l now "America/Bogota" }}`), /render exceeds 1000000 steps/)
  t.throws(() => render('{{ $s := repeat 30000 "abcde fghi" }}{{ $u := title $s }}'), /render exceeds 1000000 steps/, 'title over 300,000 characters')
  t.equal(render('{{ range 1000 }}{{ $d := date "2006-01-02 15:04" now }}{{ end }}{{ date "2006-01-02" now }}'), '2026-01-15', 'a thousand dates with a short layout fit')
  t.equal(render('{{ title "ana maría de la cruz" }}'), 'Ana María De La Cruz')
})

t.test('a render has a wall-clock bound besides its steps, looked at every ten thousand steps', async (t) => {
  // A deadline already past at the start: what the clock says decides nothing but whether the render looked.
  t.throws(() => renderWithin('{{ range 50000 }}{{ end }}', { maxMillis: -1 }), /render exceeds -1 ms/)
  t.equal(renderWithin('{{ range 9999 }}{{ end }}done', { maxMillis: -1 }), 'done', 'a render under ten thousand steps never looks')
})

t.test('the compiled-template cache is bounded by the heap its templates take, not only by their number', async (t) => {
  const big = (i: number) => `${i} ${'x'.repeat(64 * 1024)}`
  for (let i = 0; i < 80; i++) compileTemplate(big(i))
  t.ok(compiledTemplateCount() <= 64, `at most 64 templates of 64 KiB are kept (${compiledTemplateCount()})`)
  t.equal(compileTemplate(big(79)).render(credit(), env).length, 64 * 1024 + 3, 'the latest is kept and renders')
})

t.test('a JavaScript error while rendering (a stack overflow) is the template\'s execution error, with where it happened', async (t) => {
  t.throws(() => render('{{ $x := list }}{{ range 100000 }}{{ $x = list $x }}{{ end }}{{ toJson $x }}'),
    { name: 'TemplateExecutionError', message: /^1:65: render failed: RangeError: Maximum call stack size exceeded/ })
  const failing = { now: env.now, fromWebhook: (): unknown => { throw new Error('store unavailable') } }
  t.throws(() => compileTemplate('{{ fromWebhook "a" "b" }}').render(credit(), failing), { name: 'TemplateExecutionError', message: '1:4: render failed: Error: store unavailable' })
})

t.test('string escapes beyond Unicode or beyond one byte are syntax errors with line and column, as in Go', async (t) => {
  syntaxError(t, '{{ "\\U0011FFFF" }}', /escape \\U0011FFFF is not a Unicode code point/, 1, 4)
  syntaxError(t, 'x\n  {{ "a\\400" }}', /octal escape \\400 is above \\377/, 2, 6)
  t.equal(render('{{ "\\U0010FFFF" | len }}|{{ "\\377" }}'), '1|ÿ')
})

t.test('each command of a pipeline is a level of nesting: twelve thousand stages are a syntax error, not a crash', async (t) => {
  const stages = (count: number) => `{{ 0${' | add1'.repeat(count - 1)} }}`
  t.equal(render(stages(101)), '100', 'a pipeline of 101 commands is 100 levels')
  syntaxError(t, stages(102), /nested deeper than 100 levels/, 1, 708)
  syntaxError(t, stages(12_000), /nested deeper than 100 levels/)
  syntaxError(t, `{{ ${'('.repeat(60)}0${' | add1'.repeat(41)}${')'.repeat(60)} }}`, /nested deeper than 100 levels/, undefined, undefined)
})

t.test('decimals are taken within 1e±1000: written in full, 1e999999999 would be a billion digits', async (t) => {
  t.equal(render('{{ addf "1e1000" "1" | len }}'), '1001')
  t.equal(render('{{ mulf "1e-1000" "1" }}'), `0.${'0'.repeat(999)}1`)
  for (const source of ['{{ addf "1e999999999" "1" }}', '{{ round "1e1001" 2 }}', '{{ floor "-1e999999999" }}', '{{ subf "1e-1001" "0" }}']) {
    t.throws(() => render(source), /within 1e±1000, got string/, source)
  }
  t.throws(() => render('{{ mulf "1e600" "1e600" }}'), /the result is beyond 1e±1000/, 'nor may a result go beyond')
  t.throws(() => render('{{ $x := "1e9" }}{{ range 200 }}{{ $x = mul $x $x }}{{ end }}{{ $x }}'), /the result is beyond 1e±1000/)
  t.equal(render('{{ int "1e999999999" }}|{{ printf "%d" "1e999999999" }}'), '0|%!d(string=1e999999999)', 'out of range is not a number, as any other text')
})

t.test('compiled templates are cached by their text', async (t) => {
  const source = `{{ .Credit.ID }} cache probe ${Math.random()}`
  const before = compiledTemplateCount()
  const first = compileTemplate(source)
  t.equal(compiledTemplateCount(), before + 1)
  t.equal(compileTemplate(source), first, 'the same compiled template is returned')
  t.equal(compiledTemplateCount(), before + 1)
})
