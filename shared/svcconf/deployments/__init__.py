"""Deployments: a user's server configuration becomes a real guild, reversibly.

`requests` is deployToChat's side (deploy, dry run, info with the history, rollback), `cancel` ends a queued,
waiting or running deployment (`cancel_record` for any door that has checked who may), `worker` is deployWorker's
(run, resume, wait, stop when cancelled, finish), `common` what both share, `quota` the platform's creation quota
as the deploy sees it. The engine that reads, plans and applies is `svcconf.deploy_engine`; the table is
`svcconf.store.deployment_records`. A rollback is a deployment of its own kind that undoes the newest one, or one
named by its id.

May import: the foundation (errors, settings, clock, observability) and accounts, api, backups, caller_rights, chat,
codes, config, deploy_engine, store.
"""
