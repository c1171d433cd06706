// Package beta is public and exports nothing.
package beta
