package main

import "context"

func relKillDaemon(ctx context.Context, e *env) ([]relRow, error) { return nil, nil }
func relSecretLeak(ctx context.Context, e *env) ([]relRow, error) { return nil, nil }
