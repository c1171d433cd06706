package sidecarplugin

import (
	"slices"
	"testing"
)

func TestHardenSpecArgs(t *testing.T) {
	tests := []struct {
		name string
		spec HardenSpec
		want []string
	}{
		{name: "off wins", spec: HardenSpec{Off: true, ModulePath: "/m"}, want: []string{"--harden=false"}},
		{name: "nothing to say", spec: HardenSpec{}, want: nil},
		{
			name: "every field",
			spec: HardenSpec{ModulePath: "/s/m.wasm", CacheDir: "/s/cache", PrivateDir: "/run/sc-1", MaxOpenFiles: 64, MaxProcs: 100, MaxDataBytes: 1 << 30},
			want: []string{"--harden-module=/s/m.wasm", "--harden-cache-dir=/s/cache", "--harden-private-dir=/run/sc-1",
				"--harden-nofile=64", "--harden-nproc=100", "--harden-data=1073741824"},
		},
		{name: "a path with spaces stays one argument", spec: HardenSpec{PrivateDir: "/a b"}, want: []string{"--harden-private-dir=/a b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.spec.Args(); !slices.Equal(got, tt.want) {
				t.Errorf("Args = %q, want %q", got, tt.want)
			}
		})
	}
}
