import { Type } from 'typebox';
import { BundlePath } from '../bundles/bundles.schemas.ts';
import { ProblemRef } from '../http/common-schemas.ts';
import { expectedVersions, tagged, taggedWrite } from '../http/conditional.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { Rule, RuleBody, RuleList, RulePath } from './rules.schemas.ts';
import { createRule, deleteRule, getRule, listRules, replaceRule } from './rules.service.ts';

const tags = tag(
  'rules',
  'Configuration rules of a bundle: when some products are chosen, others are required or excluded',
);

export const rulesRoutes: Routes = async (app) => {
  app.get(
    '/bundles/:bundleId/rules',
    {
      schema: {
        operationId: 'listRules',
        summary: "List a bundle's configuration rules",
        tags,
        params: BundlePath,
        response: { 200: Type.With(RuleList, { description: 'The rules of the bundle' }) },
      },
    },
    async (request) => listRules(request.scope, request.params.bundleId),
  );

  app.post(
    '/bundles/:bundleId/rules',
    {
      schema: {
        operationId: 'createRule',
        summary: 'Create a configuration rule in a bundle',
        description:
          'A requires rule: when `when` holds, every selector of `then` must hold; an excludes rule: none may. ' +
          `A bundle holds at most 500 rules (422 rule_violation).`,
        tags,
        params: BundlePath,
        body: RuleBody,
        response: { 201: Type.With(Rule, { description: 'The rule created' }), 422: ProblemRef },
      },
    },
    async (request, reply) => {
      const { bundleId } = request.params;
      const made = await createRule(request.scope, { bundleId, body: request.body });
      const rule = tagged(reply, made.value.id, made);
      return reply.code(201).header('location', `/v1/bundles/${bundleId}/rules/${rule.id}`).send(rule);
    },
  );

  app.get(
    '/bundles/:bundleId/rules/:ruleId',
    {
      schema: {
        operationId: 'getRule',
        summary: 'Read a configuration rule',
        tags,
        params: RulePath,
        response: { 200: Type.With(Rule, { description: 'The rule' }) },
      },
    },
    async (request, reply) => {
      const { bundleId, ruleId } = request.params;
      return tagged(reply, ruleId, await getRule(request.scope, { bundleId, ruleId }));
    },
  );

  app.put(
    '/bundles/:bundleId/rules/:ruleId',
    {
      schema: {
        operationId: 'replaceRule',
        summary: 'Replace a configuration rule as a whole',
        tags,
        params: RulePath,
        body: RuleBody,
        response: { 200: Type.With(Rule, { description: 'The rule as replaced' }), 422: ProblemRef },
      },
    },
    async (request, reply) => {
      const { bundleId, ruleId } = request.params;
      return taggedWrite(request, reply, ruleId, (expected) =>
        replaceRule(request.scope, { bundleId, ruleId, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/bundles/:bundleId/rules/:ruleId',
    {
      config: { etag: false },
      schema: {
        operationId: 'deleteRule',
        summary: 'Delete a configuration rule',
        tags,
        params: RulePath,
        response: { 204: Type.Null({ description: 'Deleted; no body' }) },
      },
    },
    async (request, reply) => {
      const { bundleId, ruleId } = request.params;
      await deleteRule(request.scope, { bundleId, ruleId, expected: expectedVersions(request, ruleId) });
      return reply.code(204).send(null);
    },
  );
};
