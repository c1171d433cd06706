package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/palyra-go/palyra/cmd/palyra/internal/output"
	"github.com/palyra-go/palyra/host"
	"github.com/spf13/cobra"
)

// configCommand is skills config: the operator config of a skill
// (manifest [config], docs/skill-toml.md).
func (a *app) configCommand() *cobra.Command {
	c := group("config", "Get, set and unset a skill's operator config", a.configGetCommand(), a.configSetCommand(), a.configUnsetCommand())
	c.Example = "  palyra skills config get acme.weather\n" +
		"  palyra skills config set acme.weather endpoint=https://api.example.com retries=3\n" +
		"  printf %s \"$TOKEN\" | palyra skills config set acme.weather --stdin api_token\n" +
		"  palyra skills config unset acme.weather retries"
	c.Long = "A skill's manifest may declare, in its [config] table, a JSON Schema of the configuration its operator sets: an endpoint, a mode, " +
		"an API token. Values are set per skill (they survive upgrades), checked against the schema of the current version, and read by the " +
		"skill at every call (skill.Config in the Go SDK). Keys the manifest marks sensitive are kept in the vault and shown as ***. " +
		"A skill whose required keys are not all set is not eligible (config_missing); skills list and info show which keys."
	return c
}

func (a *app) configGetCommand() *cobra.Command {
	var sf stateFlags
	c := &cobra.Command{
		Use:     "get SKILL_ID",
		Example: "  palyra skills config get acme.weather\n  palyra skills config get acme.weather -o json",
		Short:   "Show a skill's config: every key, its value (sensitive ones as ***), and what is missing",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			r, err := sv.SkillConfig(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.emit(r, configText(r, a.wide()))
		},
	}
	sf.register(c, false)
	return c
}

func (a *app) configSetCommand() *cobra.Command {
	var (
		sf     stateFlags
		stdin  string
		asJSON bool
	)
	c := &cobra.Command{
		Use: "set SKILL_ID KEY=VALUE... [--stdin KEY]",
		Example: "  palyra skills config set acme.weather endpoint=https://api.example.com retries=3\n" +
			"  palyra skills config set acme.weather --json 'regions=[\"eu\",\"us\"]'\n" +
			"  printf %s \"$TOKEN\" | palyra skills config set acme.weather --stdin api_token",
		Short: "Set config values of a skill, checked against its schema",
		Long: "Each KEY=VALUE is typed by the schema of the skill's current version: for a property of type string the VALUE is taken as is " +
			"(token=123 is the string \"123\"); integer, number and boolean properties parse VALUE as such; any other property (an object, an array, " +
			"an enum of mixed types, a property without a single type) takes VALUE as JSON when it parses, else as a string. --json parses every " +
			"VALUE as JSON. A sensitive key's value is never taken from the command line (it would show in ps and shell history): pipe it on stdin " +
			"with --stdin KEY. Every value is checked before any is stored; a key the schema does not declare or a value that does not fit " +
			"fails with config_invalid naming the key and why.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || (len(args) < 2 && stdin == "") {
				return fmt.Errorf("%w: %s takes the skill id and at least one KEY=VALUE (or --stdin KEY)", errUsage, cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			cur, err := sv.SkillConfig(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			values := map[string]json.RawMessage{}
			for _, kv := range args[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return fmt.Errorf("%w: %q is not KEY=VALUE", errUsage, clip(kv))
				}
				if slices.Contains(cur.Sensitive, k) {
					return fmt.Errorf("%w: %s is sensitive: its value is never taken from the command line; pipe it on stdin with --stdin %s", errUsage, k, k)
				}
				if _, dup := values[k]; dup {
					return fmt.Errorf("%w: %s is given twice", errUsage, k)
				}
				values[k] = configValue(cur, k, v, asJSON)
			}
			if stdin != "" {
				if _, dup := values[stdin]; dup {
					return fmt.Errorf("%w: %s is given twice", errUsage, stdin)
				}
				raw, err := a.readSecretValue(false)
				if err != nil {
					return err
				}
				values[stdin] = configValue(cur, stdin, string(raw), asJSON)
				clear(raw)
			}
			r, err := sv.SetSkillConfig(a.actor(cmd), host.SetConfigRequest{SkillID: args[0], Values: values})
			if err != nil {
				return err
			}
			keys := make([]string, 0, len(values))
			for k := range values {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			return a.emit(r, fmt.Sprintf("config of %s set: %s\n%s", r.SkillID, strings.Join(keys, ", "), configText(r, a.wide())))
		},
	}
	c.Flags().StringVar(&stdin, "stdin", "", "read the value of this `KEY` from stdin (for sensitive keys)")
	c.Flags().BoolVar(&asJSON, "json", false, "parse every VALUE as JSON")
	sf.register(c, false)
	return c
}

func (a *app) configUnsetCommand() *cobra.Command {
	var sf stateFlags
	c := &cobra.Command{
		Use:     "unset SKILL_ID KEY...",
		Example: "  palyra skills config unset acme.weather retries\n  palyra skills config unset acme.weather api_token endpoint",
		Short:   "Remove config values of a skill (a key with a default falls back to it)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return fmt.Errorf("%w: %s takes the skill id and at least one KEY", errUsage, cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sv, err := a.service(cmd, &sf, stateLocalFlags...)
			if err != nil {
				return err
			}
			defer sv.Close()
			r, err := sv.UnsetSkillConfig(a.actor(cmd), host.UnsetConfigRequest{SkillID: args[0], Keys: args[1:]})
			if err != nil {
				return err
			}
			return a.emit(r, fmt.Sprintf("config of %s unset: %s\n%s", r.SkillID, strings.Join(args[1:], ", "), configText(r, a.wide())))
		},
	}
	sf.register(c, false)
	return c
}

// configValue types the command-line text v of key by the schema (see
// skills config set's help).
func configValue(cur *host.SkillConfig, key, v string, asJSON bool) json.RawMessage {
	typ := ""
	for _, e := range cur.Entries {
		if e.Key == key {
			typ = e.Type
		}
	}
	str := func() json.RawMessage { b, _ := json.Marshal(v); return b }
	if asJSON {
		return json.RawMessage(v)
	}
	switch typ {
	case "string":
		return str()
	case "integer":
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return json.RawMessage(v)
		}
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err == nil && json.Valid([]byte(v)) {
			return json.RawMessage(v)
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return json.RawMessage(strconv.FormatBool(b))
		}
	}
	if typ == "" || typ == "object" || typ == "array" || typ == "null" {
		if json.Valid([]byte(v)) {
			var buf bytes.Buffer
			if json.Compact(&buf, []byte(v)) == nil {
				return buf.Bytes()
			}
		}
	}
	// A value that does not parse as its type goes as a string: the
	// schema check names the key and the type it wants.
	return str()
}

// clip shortens a command-line argument for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// configText is the table of a skill's config, then what is missing or
// unfit.
func configText(r *host.SkillConfig, wide bool) string {
	var b strings.Builder
	if len(r.Entries) == 0 {
		fmt.Fprintf(&b, "%s %s declares no config.\n", r.SkillID, r.Version)
	} else {
		t := output.NewTable(
			output.Column{Header: "key"}, output.Column{Header: "value"}, output.Column{Header: "set"},
			output.Column{Header: "type"}, output.Column{Header: "required"}, output.Column{Header: "sensitive"},
			output.Column{Header: "default", Wide: true}, output.Column{Header: "problem", Wide: true},
			output.Column{Header: "updated_by", Wide: true},
		)
		for _, e := range r.Entries {
			value := string(e.Value)
			if !e.Set {
				value = "(not set)"
				if e.Default != nil {
					value = "(default " + string(e.Default) + ")"
				}
			} else if e.Sensitive {
				value = "***"
			}
			set, req, sens := "no", "", ""
			if e.Set {
				set = "yes"
			}
			if e.Required {
				req = "yes"
			}
			if e.Sensitive {
				sens = "yes"
			}
			if !e.Declared {
				req = "undeclared"
			}
			t.Row(e.Key, value, set, dashIfEmpty(e.Type), dashIfEmpty(req), dashIfEmpty(sens), dashIfEmpty(string(e.Default)), dashIfEmpty(e.Problem), dashIfEmpty(e.Principal))
		}
		b.WriteString(t.String(wide))
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(&b, "\nmissing (the skill is not eligible until set): %s\n", strings.Join(r.Missing, ", "))
	}
	for _, u := range r.Unfit {
		fmt.Fprintf(&b, "\nunfit: %s: %s (set it again or unset it)\n", u.Key, u.Reason)
	}
	return strings.TrimRight(b.String(), "\n")
}
