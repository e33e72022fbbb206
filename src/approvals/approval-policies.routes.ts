import { Type } from 'typebox';
import { expectedVersions, tagged, taggedWrite } from '../http/conditional.ts';
import { tag } from '../http/openapi.ts';
import type { Routes } from '../http/routes.ts';
import { ProblemRef } from '../shared/schemas.ts';
import {
  ApprovalPolicy,
  ApprovalPolicyBody,
  ApprovalPolicyList,
  ApprovalPolicyPath,
  approvalsTag,
  MAX_POLICIES_PER_ACCOUNT,
} from './approval-policies.schemas.ts';
import {
  createApprovalPolicy,
  deleteApprovalPolicy,
  getApprovalPolicy,
  listApprovalPolicies,
  replaceApprovalPolicy,
} from './approval-policies.service.ts';

const tags = tag(approvalsTag.name, approvalsTag.description);

export const approvalPoliciesRoutes: Routes = async (app) => {
  app.get(
    '/approval-policies',
    {
      schema: {
        operationId: 'listApprovalPolicies',
        summary: "List the account's approval policies",
        description: 'Every policy of the account, active or not, ordered by id.',
        tags,
        response: { 200: Type.With(ApprovalPolicyList, { description: "The account's approval policies" }) },
      },
    },
    async (request) => listApprovalPolicies(request.scope),
  );

  app.post(
    '/approval-policies',
    {
      schema: {
        operationId: 'createApprovalPolicy',
        summary: 'Create an approval policy',
        description:
          'Submitting a quote that an active policy matches (any of its conditions holds) sends it to ' +
          `pending_approval. An account has at most ${MAX_POLICIES_PER_ACCOUNT} policies (422 rule_violation).`,
        tags,
        body: ApprovalPolicyBody,
        response: { 201: Type.With(ApprovalPolicy, { description: 'The policy created' }), 422: ProblemRef },
      },
    },
    async (request, reply) => {
      const made = await createApprovalPolicy(request.scope, request.body);
      const policy = tagged(reply, made.value.id, made);
      return reply.code(201).header('location', `/v1/approval-policies/${policy.id}`).send(policy);
    },
  );

  app.get(
    '/approval-policies/:policyId',
    {
      schema: {
        operationId: 'getApprovalPolicy',
        summary: 'Read an approval policy',
        description: 'The policy with its ETag, for a later If-Match; another account’s id answers 404.',
        tags,
        params: ApprovalPolicyPath,
        response: { 200: Type.With(ApprovalPolicy, { description: 'The policy' }) },
      },
    },
    async (request, reply) => {
      const { policyId } = request.params;
      return tagged(reply, policyId, await getApprovalPolicy(request.scope, policyId));
    },
  );

  app.put(
    '/approval-policies/:policyId',
    {
      schema: {
        operationId: 'replaceApprovalPolicy',
        summary: 'Replace an approval policy as a whole',
        description:
          'Quotes already submitted keep the decisions they were given; the next submit reads the new policy.',
        tags,
        params: ApprovalPolicyPath,
        body: ApprovalPolicyBody,
        response: {
          200: Type.With(ApprovalPolicy, { description: 'The policy as replaced' }),
          422: ProblemRef,
        },
      },
    },
    async (request, reply) => {
      const { policyId } = request.params;
      return taggedWrite(request, reply, policyId, (expected) =>
        replaceApprovalPolicy(request.scope, { id: policyId, body: request.body, expected }),
      );
    },
  );

  app.delete(
    '/approval-policies/:policyId',
    {
      config: { etag: false },
      schema: {
        operationId: 'deleteApprovalPolicy',
        summary: 'Delete an approval policy',
        description: 'The approval history of quotes keeps naming it by id.',
        tags,
        params: ApprovalPolicyPath,
        response: { 204: Type.Null({ description: 'Deleted; no body' }) },
      },
    },
    async (request, reply) => {
      const { policyId } = request.params;
      await deleteApprovalPolicy(request.scope, {
        id: policyId,
        expected: expectedVersions(request, policyId),
      });
      return reply.code(204).send(null);
    },
  );
};
