// Package siteadmin is erpgate's one site-administration layer: the rules
// for registering and managing sites, which the admin API and the
// registration and site-owner pages share. It validates input (the
// connector's base URL, identity and settings rules, the ERP address
// policy), verifies credentials against the ERP before anything is saved,
// stores through platform/store/sites, and records every action, done or
// refused, as an audit event naming the actor.
//
// Errors are *Error values whose Message is a plain sentence safe to show
// the person who acted; callers map Kind to their own status codes.
package siteadmin
