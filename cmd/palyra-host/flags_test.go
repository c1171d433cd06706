package main

import (
	"testing"

	"github.com/palyra-go/palyra/host/supervisor"
)

func TestSupervisorConfigFlags(t *testing.T) {
	tests := []struct {
		name    string
		flags   hostFlags
		want    supervisor.Config
		wantErr bool
	}{
		{name: "hardened by default, as the host's user", flags: hostFlags{}, want: supervisor.Config{}},
		{name: "off only when asked", flags: hostFlags{noHarden: true}, want: supervisor.Config{Hardening: supervisor.HardeningConfig{Off: true}}},
		{name: "uid:gid", flags: hostFlags{sidecarUser: "65534:65533"}, want: supervisor.Config{RunAs: &supervisor.Credential{UID: 65534, GID: 65533}}},
		{name: "a name", flags: hostFlags{sidecarUser: "root"}, want: supervisor.Config{RunAs: &supervisor.Credential{UID: 0, GID: 0}}},
		{name: "not numbers", flags: hostFlags{sidecarUser: "a:b"}, wantErr: true},
		{name: "no such user", flags: hostFlags{sidecarUser: "palyra-no-such-user"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.flags.supervisorConfig()
			if (err != nil) != tt.wantErr {
				t.Fatalf("supervisorConfig: %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.Hardening != tt.want.Hardening || (got.RunAs == nil) != (tt.want.RunAs == nil) || (got.RunAs != nil && *got.RunAs != *tt.want.RunAs) {
				t.Errorf("supervisorConfig = %+v (run as %+v), want %+v (run as %+v)", got, got.RunAs, tt.want, tt.want.RunAs)
			}
		})
	}
}
