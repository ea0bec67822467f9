/**
 * The command registry of a dirid server: every object and command, in one
 * place, with the services the server wires in (OIDC discovery and the check of IdP
 * references). The API contract (api.json) is derived from what is
 * registered here.
 */
import { CommandRegistry, type Services } from '../framework/command.js';
import { crudCommands } from '../framework/crud.js';
import { groupCommands, groupObject } from './group.js';
import { hostCommands, hostObject } from './host.js';
import { hostEnrollCommand } from './host-enroll.js';
import { idpObject } from './idp.js';
import { idpCheckCommand } from './idp-check.js';
import { keytabGetCommand } from './keytab.js';
import { passwdCommand } from './passwd.js';
import { pingCommand } from './ping.js';
import { privilegeCommands, privilegeObject, roleCommands, roleObject } from './role.js';
import { schemaCommand } from './schema.js';
import { serviceCommands, serviceObject } from './service.js';
import { userObject } from './user.js';
import { userUnlockCommand } from './user-unlock.js';

export function buildRegistry(services: Services = {}): CommandRegistry {
  const r = new CommandRegistry(services);
  for (const o of [idpObject, userObject, groupObject, roleObject, privilegeObject, serviceObject, hostObject]) r.objects.set(o.name, o);
  r.register(
    ...crudCommands(idpObject),
    idpCheckCommand,
    ...crudCommands(userObject),
    userUnlockCommand,
    ...groupCommands(),
    ...roleCommands(),
    ...privilegeCommands(),
    ...serviceCommands(),
    ...hostCommands(),
    hostEnrollCommand,
    keytabGetCommand,
    passwdCommand,
    pingCommand,
    schemaCommand,
  );
  return r;
}
