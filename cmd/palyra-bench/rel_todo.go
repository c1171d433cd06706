package main

import "context"

func relSecretLeak(ctx context.Context, e *env) ([]relRow, error) { return nil, nil }
