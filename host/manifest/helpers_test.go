package manifest_test

import toml "github.com/pelletier/go-toml/v2"

func tomlUnmarshal(data []byte, v any) error { return toml.Unmarshal(data, v) }
