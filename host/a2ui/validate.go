package a2ui

import (
	"encoding/json"
	"strings"
)

var docErrs = errs{kind: ErrInvalid}

// Validate parses data as an A2UI document and checks every rule and limit
// of the package; it returns the typed document, or an *Error naming the
// JSON Pointer of the first offending value.
//
// In order: data is at most MaxDocumentBytes; it is one JSON object in
// UTF-8 without duplicate keys, numbers beyond float64 or nesting deeper
// than MaxJSONDepth; its keys are v (exactly 1), surface (non-blank, at most
// MaxSurface), components (1 to MaxComponents) and optionally experimental;
// each component is {id, type, props} with an id of [A-Za-z0-9:_-]{1,64}
// unique in the document, a known type and props of that type, every prop
// known, of its JSON type and within its limit.
func Validate(data []byte) (*Document, error) {
	if len(data) > MaxDocumentBytes {
		return nil, docErrs.limit("", "document size in bytes", MaxDocumentBytes, len(data))
	}
	tree, err := docErrs.decodeJSON(data)
	if err != nil {
		return nil, err
	}
	return document(tree)
}

// document checks a decoded document.
func document(tree any) (*Document, error) {
	c := docErrs
	m, err := c.object("", tree, "v", "surface", "components", "experimental")
	if err != nil {
		return nil, err
	}
	v, _, err := c.get("", m, "v", true)
	if err != nil {
		return nil, err
	}
	if n, ok := v.(json.Number); !ok || float(n) != Version {
		return nil, c.invalid("/v", "want %d, got %s", Version, shortJSON(v))
	}
	d := &Document{}
	if d.Surface, _, err = c.str("", m, "surface", true, MaxSurface); err != nil {
		return nil, err
	}
	if strings.TrimSpace(d.Surface) == "" {
		return nil, c.invalid("/surface", "blank")
	}
	comps, _, err := c.arr("", m, "components", true, MaxComponents, "component count")
	if err != nil {
		return nil, err
	}
	if len(comps) == 0 {
		return nil, c.invalid("/components", "no components (want 1 to %d)", MaxComponents)
	}
	d.Components = make([]Component, len(comps))
	seen := make(map[string]int, len(comps))
	for i, cv := range comps {
		p := ptrIndex("/components", i)
		comp, err := component(p, cv)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[comp.ID]; dup {
			return nil, c.invalid(p+"/id", "id %s is already used by /components/%d", quote(comp.ID), j)
		}
		seen[comp.ID] = i
		d.Components[i] = comp
	}
	if ev, ok := m["experimental"]; ok {
		if d.Experimental, err = experimental("/experimental", ev); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// shortJSON renders a decoded scalar for a message, bounded; other values
// by their JSON type.
func shortJSON(v any) string {
	switch t := v.(type) {
	case string:
		return quote(t)
	case json.Number:
		if len(t) <= 32 {
			return string(t)
		}
	case bool, nil:
		b, _ := json.Marshal(t)
		return string(b)
	}
	return kindOf(v)
}

var componentTypes = []string{"text", "markdown", "list", "table", "form", "chart"}

func component(path string, v any) (Component, error) {
	c := docErrs
	m, err := c.object(path, v, "id", "type", "props")
	if err != nil {
		return Component{}, err
	}
	var comp Component
	idv, _, err := c.get(path, m, "id", true)
	if err != nil {
		return comp, err
	}
	if comp.ID, err = c.id(path+"/id", idv, MaxComponentID); err != nil {
		return comp, err
	}
	t, _, err := c.str(path, m, "type", true, MaxString)
	if err != nil {
		return comp, err
	}
	if err := c.oneOf(path+"/type", "component type", t, componentTypes...); err != nil {
		return comp, err
	}
	comp.Type = Type(t)
	pv, _, err := c.get(path, m, "props", true)
	if err != nil {
		return comp, err
	}
	pp := path + "/props"
	switch comp.Type {
	case TypeText:
		comp.Props, err = textProps(pp, pv)
	case TypeMarkdown:
		comp.Props, err = markdownProps(pp, pv)
	case TypeList:
		comp.Props, err = listProps(pp, pv)
	case TypeTable:
		comp.Props, err = tableProps(pp, pv)
	case TypeForm:
		comp.Props, err = formProps(pp, pv)
	case TypeChart:
		comp.Props, err = chartProps(pp, pv)
	}
	return comp, err
}

func textProps(path string, v any) (*TextProps, error) {
	c := docErrs
	m, err := c.object(path, v, "value", "tone")
	if err != nil {
		return nil, err
	}
	p := &TextProps{}
	if p.Value, _, err = c.str(path, m, "value", false, MaxString); err != nil {
		return nil, err
	}
	tone, ok, err := c.str(path, m, "tone", false, MaxString)
	if err != nil {
		return nil, err
	}
	if ok {
		if err := c.oneOf(path+"/tone", "tone", tone, "normal", "muted", "success", "critical"); err != nil {
			return nil, err
		}
		p.Tone = Tone(tone)
	}
	return p, nil
}

func markdownProps(path string, v any) (*MarkdownProps, error) {
	c := docErrs
	m, err := c.object(path, v, "value", "markdown")
	if err != nil {
		return nil, err
	}
	key, err := c.alias(path, m, "value", "markdown")
	if err != nil {
		return nil, err
	}
	p := &MarkdownProps{}
	if p.Value, _, err = c.str(path, m, key, false, MaxMarkdown); err != nil {
		return nil, err
	}
	return p, nil
}

func listProps(path string, v any) (*ListProps, error) {
	c := docErrs
	m, err := c.object(path, v, "ordered", "items")
	if err != nil {
		return nil, err
	}
	p := &ListProps{Items: []any{}}
	if p.Ordered, _, err = c.boolean(path, m, "ordered"); err != nil {
		return nil, err
	}
	items, _, err := c.arr(path, m, "items", false, MaxListItems, "item count")
	if err != nil {
		return nil, err
	}
	for i, it := range items {
		v, err := c.free(func() string { return ptrIndex(path+"/items", i) }, it)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, v)
	}
	return p, nil
}

func tableProps(path string, v any) (*TableProps, error) {
	c := docErrs
	m, err := c.object(path, v, "columns", "rows")
	if err != nil {
		return nil, err
	}
	cols, _, err := c.arr(path, m, "columns", true, MaxTableColumns, "column count")
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, c.invalid(path+"/columns", "no columns (want 1 to %d)", MaxTableColumns)
	}
	p := &TableProps{Columns: make([]string, len(cols)), Rows: [][]any{}}
	for i, col := range cols {
		if p.Columns[i], err = c.strValue(ptrIndex(path+"/columns", i), col, MaxString); err != nil {
			return nil, err
		}
	}
	rows, _, err := c.arr(path, m, "rows", false, MaxTableRows, "row count")
	if err != nil {
		return nil, err
	}
	for i, rv := range rows {
		cells, ok := rv.([]any)
		if !ok || len(cells) > len(cols) {
			_, err := c.arrValue(ptrIndex(path+"/rows", i), rv, len(cols), "cell count (at most the column count)")
			return nil, err
		}
		row := make([]any, len(cells))
		for j, cell := range cells {
			if row[j], err = c.free(func() string { return ptrIndex(ptrIndex(path+"/rows", i), j) }, cell); err != nil {
				return nil, err
			}
		}
		p.Rows = append(p.Rows, row)
	}
	return p, nil
}

func chartProps(path string, v any) (*ChartProps, error) {
	c := docErrs
	m, err := c.object(path, v, "title", "kind", "series")
	if err != nil {
		return nil, err
	}
	p := &ChartProps{Series: []Point{}}
	if p.Title, _, err = c.str(path, m, "title", false, MaxString); err != nil {
		return nil, err
	}
	kind, ok, err := c.str(path, m, "kind", false, MaxString)
	if err != nil {
		return nil, err
	}
	if ok {
		if err := c.oneOf(path+"/kind", "chart kind", kind, "bar", "line", "pie"); err != nil {
			return nil, err
		}
		p.Kind = ChartKind(kind)
	}
	series, _, err := c.arr(path, m, "series", false, MaxChartPoints, "point count")
	if err != nil {
		return nil, err
	}
	for i, sv := range series {
		sp := ptrIndex(path+"/series", i)
		pm, err := c.object(sp, sv, "label", "value")
		if err != nil {
			return nil, err
		}
		var pt Point
		if pt.Label, _, err = c.str(sp, pm, "label", true, MaxString); err != nil {
			return nil, err
		}
		if pt.Value, _, err = c.num(sp, pm, "value", true); err != nil {
			return nil, err
		}
		if pt.Value < 0 || pt.Value > MaxChartValue {
			return nil, c.invalid(sp+"/value", "%v is outside [0, %d]", pt.Value, MaxChartValue)
		}
		p.Series = append(p.Series, pt)
	}
	return p, nil
}

// experimental checks the governance object. Each key may be given in
// snake_case or camelCase, not both.
func experimental(path string, v any) (*Experimental, error) {
	c := docErrs
	names := [][2]string{
		{"track_id", "trackId"}, {"feature_flag", "featureFlag"}, {"support_summary", "supportSummary"},
		{"rollout_stage", "rolloutStage"}, {"ambient_mode", "ambientMode"}, {"consent_required", "consentRequired"},
		{"security_review", "securityReview"}, {"exit_criteria", "exitCriteria"},
	}
	var all []string
	for _, n := range names {
		all = append(all, n[0], n[1])
	}
	m, err := c.object(path, v, all...)
	if err != nil {
		return nil, err
	}
	key := make(map[string]string, len(names))
	for _, n := range names {
		if key[n[0]], err = c.alias(path, m, n[0], n[1]); err != nil {
			return nil, err
		}
	}
	e := &Experimental{RolloutStage: "dark_launch", AmbientMode: "disabled"}
	required := func(k string, max int) (string, error) {
		s, _, err := c.str(path, m, key[k], true, max)
		if err == nil && strings.TrimSpace(s) == "" {
			err = c.invalid(ptr(path, key[k]), "blank")
		}
		return s, err
	}
	if e.TrackID, err = required("track_id", MaxTrackID); err != nil {
		return nil, err
	}
	if e.FeatureFlag, err = required("feature_flag", MaxFeatureFlag); err != nil {
		return nil, err
	}
	if r := badIDChar(e.FeatureFlag, true); r >= 0 {
		return nil, c.invalid(ptr(path, key["feature_flag"]), "%s has the character %q (want [A-Za-z0-9:._-])", quote(e.FeatureFlag), r)
	}
	if e.SupportSummary, err = required("support_summary", MaxSupportSummary); err != nil {
		return nil, err
	}
	if s, ok, err := c.str(path, m, key["rollout_stage"], false, MaxString); err != nil {
		return nil, err
	} else if ok {
		if err := c.oneOf(ptr(path, key["rollout_stage"]), "rollout stage", s, "disabled", "dark_launch", "operator_preview", "limited_preview"); err != nil {
			return nil, err
		}
		e.RolloutStage = s
	}
	if s, ok, err := c.str(path, m, key["ambient_mode"], false, MaxString); err != nil {
		return nil, err
	} else if ok {
		if err := c.oneOf(ptr(path, key["ambient_mode"]), "ambient mode", s, "disabled", "push_to_talk"); err != nil {
			return nil, err
		}
		e.AmbientMode = s
	}
	if e.ConsentRequired, _, err = c.boolean(path, m, key["consent_required"]); err != nil {
		return nil, err
	}
	if e.AmbientMode == "push_to_talk" && !e.ConsentRequired {
		return nil, c.invalid(ptr(path, key["consent_required"]), "ambient mode push_to_talk needs consent_required true")
	}
	list := func(k string) ([]string, error) {
		lp := ptr(path, key[k])
		a, _, err := c.arr(path, m, key[k], true, MaxGovernanceItems, "entry count")
		if err != nil {
			return nil, err
		}
		if len(a) == 0 {
			return nil, c.invalid(lp, "empty (want 1 to %d entries)", MaxGovernanceItems)
		}
		out := make([]string, len(a))
		for i, item := range a {
			if out[i], err = c.strValue(ptrIndex(lp, i), item, MaxGovernanceItem); err != nil {
				return nil, err
			}
			if strings.TrimSpace(out[i]) == "" {
				return nil, c.invalid(ptrIndex(lp, i), "blank")
			}
		}
		return out, nil
	}
	if e.SecurityReview, err = list("security_review"); err != nil {
		return nil, err
	}
	if e.ExitCriteria, err = list("exit_criteria"); err != nil {
		return nil, err
	}
	return e, nil
}
